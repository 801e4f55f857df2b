# bench: rules for this component
