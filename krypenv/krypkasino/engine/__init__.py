"""The batched Krypkasino engine: state arrays, compiled capture search and stepping."""

from krypenv.krypkasino.engine.expansion import (
    card_captures,
    legal_captures,
)
from krypenv.krypkasino.engine.state import MOVE_ERRORS, DealBatch, IllegalMoveError, shuffled_deck, shuffled_decks

__all__ = [
    "MOVE_ERRORS",
    "DealBatch",
    "IllegalMoveError",
    "card_captures",
    "legal_captures",
    "shuffled_deck",
    "shuffled_decks",
]
