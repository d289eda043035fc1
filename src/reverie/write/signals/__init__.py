"""Seed 004 signal scan and smart buffer."""
