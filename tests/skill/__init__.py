"""Tests of skillab.skill."""
