"""Pure roofline analysis: bounds, classification, results."""
