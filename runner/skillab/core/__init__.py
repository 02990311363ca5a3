"""The shared types and contracts every layer builds on; it imports nothing else of skillab."""
