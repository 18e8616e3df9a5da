"""CRP: partition, customization with the metric decoder editor, the cells on the map."""
