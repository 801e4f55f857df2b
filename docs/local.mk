# docs: rules for this component
