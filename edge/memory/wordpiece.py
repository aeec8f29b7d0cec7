"""BERT WordPiece tokenisation in pure Python, matching the ``tokenizers`` pipeline of
all-MiniLM-L6-v2 (BertNormalizer with lowercasing and accent stripping, BertPreTokenizer,
WordPiece with ``##`` continuations, ``[CLS] … [SEP]``), so the daemon needs no Rust wheel.

Padding goes to the batch's longest sequence and truncation to 256 tokens: the reference
tokenizer.json pads everything to 128, which makes a short sentence ten times slower
(shared/notes/embeddings.md).

>>> tok = WordPiece.from_vocab_file(DEFAULT_VOCAB)
>>> tok.encode("Hello, world!")
[101, 7592, 1010, 2088, 999, 102]
"""

from __future__ import annotations

import unicodedata
from array import array
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from itertools import accumulate
from pathlib import Path
from typing import Any

DEFAULT_VOCAB = resources.files("edge.memory").joinpath("data/minilm-vocab.txt")
VOCAB_SHA256 = "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"
"""The all-MiniLM-L6-v2 vocabulary (30,522 tokens, line number = id), Apache-2.0."""

MAX_TOKENS = 256
MAX_WORD_CHARS = 100

_CJK_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
               (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def _is_cjk(code: int) -> bool:
    return any(lo <= code <= hi for lo, hi in _CJK_RANGES)


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_control(char: str) -> bool:
    if char in "\t\n\r":
        return False
    return unicodedata.category(char) in ("Cc", "Cf")


def normalize(text: str) -> str:
    """Clean control characters, space out CJK ideographs, strip accents, lowercase."""
    out = []
    for char in text:
        code = ord(char)
        if code == 0 or code == 0xFFFD or _is_control(char):
            continue
        if char.isspace():
            out.append(" ")
        elif _is_cjk(code):
            out.append(f" {char} ")
        else:
            out.append(char)
    decomposed = unicodedata.normalize("NFD", "".join(out))
    return "".join(c for c in decomposed if unicodedata.category(c) != "Mn").lower()


def pre_tokenize(text: str) -> list[str]:
    """Split on whitespace and isolate every punctuation character."""
    words: list[str] = []
    for chunk in text.split():
        start = 0
        for i, char in enumerate(chunk):
            if _is_punctuation(char):
                if start < i:
                    words.append(chunk[start:i])
                words.append(char)
                start = i + 1
        if start < len(chunk):
            words.append(chunk[start:])
    return words


@dataclass
class Batch:
    input_ids: list[list[int]]
    attention_mask: list[list[int]]


class TokenTable(Mapping[str, int]):
    """Token to id (its line number) over one string of all tokens and an open-addressing table
    of ids: about 0.9 MB resident for the 30,522 tokens instead of 3.5 MB as a dict, which the
    daemon would carry for as long as it runs.

    >>> table = TokenTable(["[PAD]", "the", "##s"])
    >>> table["##s"], table.get("cat"), len(table)
    (2, None, 3)
    """

    def __init__(self, tokens: list[str]):
        self._text = "".join(tokens)
        self._ends = array("I", accumulate(map(len, tokens)))
        size = 1 << (2 * len(tokens)).bit_length()
        self._mask = size - 1
        self._slots = array("i", [-1]) * size
        for token_id, token in enumerate(tokens):
            slot = hash(token) & self._mask
            while self._slots[slot] >= 0:
                slot = (slot + 1) & self._mask
            self._slots[slot] = token_id

    def _token(self, token_id: int) -> str:
        start = self._ends[token_id - 1] if token_id else 0
        return self._text[start:self._ends[token_id]]

    def _find(self, token: str) -> int | None:
        slot = hash(token) & self._mask
        while (token_id := self._slots[slot]) >= 0:
            if self._token(token_id) == token:
                return token_id
            slot = (slot + 1) & self._mask
        return None

    def get(self, token: str, default: Any = None) -> Any:
        token_id = self._find(token)
        return default if token_id is None else token_id

    def __getitem__(self, token: str) -> int:
        token_id = self._find(token)
        if token_id is None:
            raise KeyError(token)
        return token_id

    def __len__(self) -> int:
        return len(self._ends)

    def __iter__(self) -> Iterator[str]:
        return (self._token(i) for i in range(len(self._ends)))


class WordPiece:
    def __init__(self, vocab: Mapping[str, int]):
        self.vocab = vocab
        self.unk = vocab["[UNK]"]
        self.cls = vocab["[CLS]"]
        self.sep = vocab["[SEP]"]
        self.pad = vocab["[PAD]"]

    @classmethod
    def from_vocab_file(cls, path: Path | resources.abc.Traversable) -> WordPiece:
        lines = path.read_text(encoding="utf-8").split("\n")
        return cls(TokenTable(lines[:-1] if lines[-1] == "" else lines))

    def _word_ids(self, word: str) -> list[int]:
        if len(word) > MAX_WORD_CHARS:
            return [self.unk]
        ids, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                found = self.vocab.get(piece)
                if found is not None:
                    ids.append(found)
                    break
                end -= 1
            else:
                return [self.unk]
            start = end
        return ids

    def encode(self, text: str, max_tokens: int = MAX_TOKENS) -> list[int]:
        ids: list[int] = []
        for word in pre_tokenize(normalize(text)):
            ids.extend(self._word_ids(word))
            if len(ids) >= max_tokens - 2:
                break
        return [self.cls, *ids[: max_tokens - 2], self.sep]

    def encode_batch(self, texts: list[str], max_tokens: int = MAX_TOKENS) -> Batch:
        encoded = [self.encode(text, max_tokens) for text in texts]
        width = max(len(ids) for ids in encoded)
        return Batch([ids + [self.pad] * (width - len(ids)) for ids in encoded],
                     [[1] * len(ids) + [0] * (width - len(ids)) for ids in encoded])
