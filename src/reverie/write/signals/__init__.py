"""Signal scan and smart buffer."""
