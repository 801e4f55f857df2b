# tui: rules for this component
