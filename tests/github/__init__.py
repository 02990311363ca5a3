"""Tests of skillab.github."""
