"""Tests of skillab.core."""
