"""fsir: a FusionStitching compiler on xDSL."""
