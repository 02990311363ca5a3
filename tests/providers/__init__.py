"""Tests of skillab.providers."""
