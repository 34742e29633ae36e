"""`ccmemory dashboard`: a live local web app over the service layer (docs/dashboard.md)."""
