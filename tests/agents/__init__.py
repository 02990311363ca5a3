"""Tests of skillab.agents."""
