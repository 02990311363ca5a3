"""Shared types and contracts: the layer every other part of skillab builds on, importing nothing of it."""
