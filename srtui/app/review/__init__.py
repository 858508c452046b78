"""Review screens: the expert's rating screen (its own app) and the organiser's views inside the main app."""
