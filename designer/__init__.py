"""The designer canvas: a React page served by Django, talking only to the public API."""
