"""Tests of skillab.harbor."""
