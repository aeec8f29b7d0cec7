"""Our WordPiece gives exactly the ids of the `tokenizers` reference over the same vocabulary."""

import hashlib
import random

from edge.memory.wordpiece import DEFAULT_VOCAB, MAX_TOKENS, VOCAB_SHA256, WordPiece

FIXED = ["Hello, world!", "The weather is lovely today", "It's so sunny outside!",
         "Café naïve résumé", "溫室的水泵 7點開", "pump\tGPIO17\x00 on\u200b at 7:30am!!",
         "x" * 150, "antidisestablishmentarianism 42.5°C", "emoji 🙂 test", "a-b_c/d\\e", ""]



def test_vocabulary_is_the_expected_file():
    assert hashlib.sha256(DEFAULT_VOCAB.read_bytes()).hexdigest() == VOCAB_SHA256


def test_ids_match_the_reference_tokenizer(reference_tokenizer):
    ours, ref = WordPiece.from_vocab_file(DEFAULT_VOCAB), reference_tokenizer
    rnd = random.Random(7)
    alphabet = "abcdefghij klmnopqrstuvwxyz.,!?'\"-éüß中文😀\t\nABCZ0123456789"
    texts = FIXED + ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 60)))
                     for _ in range(400)]
    mismatched = [t for t in texts if ours.encode(t) != ref.encode(t).ids]
    assert mismatched == []


def test_long_text_is_truncated_to_the_limit_with_cls_and_sep():
    ids = WordPiece.from_vocab_file(DEFAULT_VOCAB).encode("word " * 400)
    assert len(ids) == MAX_TOKENS and ids[0] == 101 and ids[-1] == 102


def test_batch_pads_to_the_longest_not_to_128():
    batch = WordPiece.from_vocab_file(DEFAULT_VOCAB).encode_batch(["hi", "hello there friend"])
    assert [len(row) for row in batch.input_ids] == [5, 5]
    assert batch.attention_mask == [[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]
