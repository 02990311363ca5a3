"""Tests of skillab.session."""
