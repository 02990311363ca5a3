"""Tests of skillab.grading."""
