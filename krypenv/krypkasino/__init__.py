"""Krypkasino, the Swedish misère fishing card game: its rules, batched engine and environments."""
