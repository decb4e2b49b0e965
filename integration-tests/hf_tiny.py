"""Tiny Hugging Face models with random weights (no downloads): the six of issue 10.
Dropout is off in every config, so training runs compare with eager draw for draw.

Each entry builds (model, keyword inputs) from a small config; HF_HUB_OFFLINE=1 is set
before transformers is imported.  Shared by integration-tests/test_hf_models.py and
benchmarks/capture_models.py.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import torch

VOCAB = 96
SEQ = 8


def _ids(batch: int = 2) -> torch.Tensor:
    return torch.randint(1, VOCAB, (batch, SEQ))


def gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(
        n_layer=2, n_head=2, n_embd=32, vocab_size=VOCAB, n_positions=32,
        bos_token_id=0, eos_token_id=0, use_cache=False,
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
    )  # fmt: skip
    return GPT2LMHeadModel(cfg), {"input_ids": _ids()}


def bert():
    from transformers import BertConfig, BertModel

    cfg = BertConfig(
        num_hidden_layers=2, num_attention_heads=2, hidden_size=32, intermediate_size=64,
        vocab_size=VOCAB, max_position_embeddings=32,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
    )  # fmt: skip
    return BertModel(cfg), {"input_ids": _ids()}


def llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(
        num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, hidden_size=32,
        intermediate_size=64, vocab_size=VOCAB, max_position_embeddings=32,
        bos_token_id=0, eos_token_id=0, pad_token_id=0, use_cache=False,
    )  # fmt: skip
    return LlamaForCausalLM(cfg), {"input_ids": _ids()}


def t5():
    from transformers import T5Config, T5Model

    cfg = T5Config(
        num_layers=2, num_decoder_layers=2, num_heads=2, d_model=32, d_kv=16, d_ff=64,
        vocab_size=VOCAB, decoder_start_token_id=0, pad_token_id=0, use_cache=False, dropout_rate=0.0,
    )  # fmt: skip
    return T5Model(cfg), {"input_ids": _ids(), "decoder_input_ids": _ids()}


def distilbert():
    from transformers import DistilBertConfig, DistilBertModel

    cfg = DistilBertConfig(
        n_layers=2, n_heads=2, dim=32, hidden_dim=64, vocab_size=VOCAB,
        max_position_embeddings=32, dropout=0.0, attention_dropout=0.0,
    )  # fmt: skip
    return DistilBertModel(cfg), {"input_ids": _ids()}


def vit():
    from transformers import ViTConfig, ViTModel

    cfg = ViTConfig(
        num_hidden_layers=2, num_attention_heads=2, hidden_size=32, intermediate_size=64,
        image_size=16, patch_size=8, num_channels=3,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
    )  # fmt: skip
    return ViTModel(cfg), {"pixel_values": torch.randn(2, 3, 16, 16)}


MODELS = {
    "gpt2": gpt2,
    "bert": bert,
    "llama": llama,
    "t5": t5,
    "distilbert": distilbert,
    "vit": vit,
}


def _mask(batch: int = 2) -> torch.Tensor:
    mask = torch.ones(batch, SEQ, dtype=torch.long)
    mask[0, :2] = 0  # left padding on the first row
    return mask


def bert_classifier():
    from transformers import AutoModelForSequenceClassification, BertConfig

    cfg = BertConfig(
        num_hidden_layers=2, num_attention_heads=2, hidden_size=32, intermediate_size=64,
        vocab_size=VOCAB, max_position_embeddings=32,
    )  # fmt: skip
    inputs = {"input_ids": _ids(), "attention_mask": _mask(), "labels": torch.tensor([0, 1])}
    return AutoModelForSequenceClassification.from_config(cfg), inputs


def distilbert_classifier():
    from transformers import AutoModelForSequenceClassification, DistilBertConfig

    cfg = DistilBertConfig(
        n_layers=2, n_heads=2, dim=32, hidden_dim=64, vocab_size=VOCAB, max_position_embeddings=32,
    )  # fmt: skip
    inputs = {"input_ids": _ids(), "attention_mask": _mask(), "labels": torch.tensor([1, 0])}
    return AutoModelForSequenceClassification.from_config(cfg), inputs


def vit_classifier():
    from transformers import AutoModelForImageClassification, ViTConfig

    cfg = ViTConfig(
        num_hidden_layers=2, num_attention_heads=2, hidden_size=32, intermediate_size=64,
        image_size=16, patch_size=8, num_labels=3,
    )  # fmt: skip
    inputs = {"pixel_values": torch.randn(2, 3, 16, 16), "labels": torch.tensor([0, 2])}
    return AutoModelForImageClassification.from_config(cfg), inputs


def llama_causal_lm():
    from transformers import AutoModelForCausalLM, LlamaConfig

    cfg = LlamaConfig(
        num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, hidden_size=32,
        intermediate_size=64, vocab_size=VOCAB, max_position_embeddings=32,
    )  # fmt: skip
    inputs = {"input_ids": _ids(), "attention_mask": _mask(), "labels": _ids()}
    return AutoModelForCausalLM.from_config(cfg), inputs


def t5_seq2seq():
    from transformers import AutoModelForSeq2SeqLM, T5Config

    cfg = T5Config(
        num_layers=2, num_decoder_layers=2, num_heads=2, d_model=32, d_kv=16, d_ff=64,
        vocab_size=VOCAB, decoder_start_token_id=0, pad_token_id=0,
    )  # fmt: skip
    inputs = {"input_ids": _ids(), "attention_mask": _mask(), "labels": _ids()}
    return AutoModelForSeq2SeqLM.from_config(cfg), inputs


# heads built as the Hugging Face docs do (Auto*.from_config, default config: cache on,
# dropout on) and called with an attention mask and labels, so the model computes its loss
HEADS = {
    "bert-classifier": bert_classifier,
    "distilbert-classifier": distilbert_classifier,
    "vit-classifier": vit_classifier,
    "llama-causal-lm": llama_causal_lm,
    "t5-seq2seq": t5_seq2seq,  # its cache deep-copies the config (get_text_config)
}


def _zoo():
    """More architectures from transformers (tiny configs, default settings otherwise),
    for benchmarks/capture_models.py --zoo: name -> builder of (model, keyword inputs)."""
    import transformers as T

    # fmt: off
    sizes = {
        "num_hidden_layers": 2, "num_attention_heads": 2, "hidden_size": 32,
        "intermediate_size": 64, "vocab_size": VOCAB, "max_position_embeddings": 32,
    }

    def encoder(cfg):
        return lambda: (
            T.AutoModel.from_config(cfg()),
            {"input_ids": _ids(), "attention_mask": _mask()},
        )

    def causal(cfg):
        inputs = lambda: {"input_ids": _ids(), "attention_mask": _mask(), "labels": _ids()}  # noqa: E731
        return lambda: (T.AutoModelForCausalLM.from_config(cfg()), inputs())

    def image(cfg):
        return lambda: (T.AutoModel.from_config(cfg()), {"pixel_values": torch.randn(2, 3, 32, 32)})

    return {
        "roberta": encoder(lambda: T.RobertaConfig(**sizes)),
        "albert": encoder(lambda: T.AlbertConfig(**sizes, embedding_size=16)),
        "electra": encoder(lambda: T.ElectraConfig(**sizes, embedding_size=16)),
        "mobilebert": encoder(
            lambda: T.MobileBertConfig(
                num_hidden_layers=2,
                num_attention_heads=2,
                hidden_size=32,
                intermediate_size=64,
                vocab_size=VOCAB,
                embedding_size=16,
                intra_bottleneck_size=32,
                true_hidden_size=32,
                num_feedforward_networks=1,
            )
        ),
        "deberta-v2": encoder(lambda: T.DebertaV2Config(**sizes)),
        "mistral": causal(lambda: T.MistralConfig(**sizes, num_key_value_heads=1)),
        "qwen2": causal(lambda: T.Qwen2Config(**sizes, num_key_value_heads=1)),
        "gemma": causal(lambda: T.GemmaConfig(**sizes, num_key_value_heads=1, head_dim=16)),
        "opt": causal(
            lambda: T.OPTConfig(
                num_hidden_layers=2,
                num_attention_heads=2,
                hidden_size=32,
                ffn_dim=64,
                vocab_size=VOCAB,
                max_position_embeddings=32,
                word_embed_proj_dim=32,
            )
        ),
        "gpt-neo": causal(
            lambda: T.GPTNeoConfig(
                num_layers=2,
                attention_types=[[["global", "local"], 1]],
                num_heads=2,
                hidden_size=32,
                vocab_size=VOCAB,
                max_position_embeddings=32,
                window_size=4,
            )
        ),
        "gpt-j": causal(
            lambda: T.GPTJConfig(
                n_layer=2,
                n_head=2,
                n_embd=32,
                vocab_size=VOCAB,
                n_positions=32,
                rotary_dim=8,
            )
        ),
        "phi": causal(lambda: T.PhiConfig(**sizes)),
        "falcon": causal(
            lambda: T.FalconConfig(
                num_hidden_layers=2,
                num_attention_heads=2,
                hidden_size=32,
                vocab_size=VOCAB,
            )
        ),
        "bart": lambda: (
            T.AutoModelForSeq2SeqLM.from_config(
                T.BartConfig(
                    encoder_layers=2,
                    decoder_layers=2,
                    encoder_attention_heads=2,
                    decoder_attention_heads=2,
                    d_model=32,
                    encoder_ffn_dim=64,
                    decoder_ffn_dim=64,
                    vocab_size=VOCAB,
                    max_position_embeddings=32,
                )
            ),
            {"input_ids": _ids(), "attention_mask": _mask(), "labels": _ids()},
        ),
        "clip-text": lambda: (T.CLIPTextModel(T.CLIPTextConfig(**sizes)), {"input_ids": _ids()}),
        "clip-vision": lambda: (
            T.CLIPVisionModel(
                T.CLIPVisionConfig(
                    num_hidden_layers=2,
                    num_attention_heads=2,
                    hidden_size=32,
                    intermediate_size=64,
                    image_size=32,
                    patch_size=8,
                )
            ),
            {"pixel_values": torch.randn(2, 3, 32, 32)},
        ),
        "swin": image(
            lambda: T.SwinConfig(
                image_size=32,
                patch_size=4,
                embed_dim=16,
                depths=[1, 1],
                num_heads=[1, 2],
                window_size=4,
            )
        ),
        "convnext": image(
            lambda: T.ConvNextConfig(hidden_sizes=[8, 16], depths=[1, 1], num_stages=2)
        ),
        "resnet": image(
            lambda: T.ResNetConfig(embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1])
        ),
        "wav2vec2": lambda: (
            T.Wav2Vec2Model(
                T.Wav2Vec2Config(
                    num_hidden_layers=2,
                    num_attention_heads=2,
                    hidden_size=32,
                    intermediate_size=64,
                    conv_dim=(8, 8),
                    conv_stride=(4, 4),
                    conv_kernel=(8, 4),
                    num_conv_pos_embeddings=4,
                    num_conv_pos_embedding_groups=2,
                )
            ),
            {"input_values": torch.randn(2, 400)},
        ),
    }
    # fmt: on


def zoo() -> dict:
    return _zoo()


def make(name: str, seed: int = 0):
    torch.manual_seed(seed)
    builders = {**MODELS, **HEADS}
    if name not in builders:
        builders = zoo()
    return builders[name]()


def tensors_of(output) -> list[torch.Tensor]:
    """The tensors of a model output (ModelOutput, tuple, tensor), in order."""
    if isinstance(output, torch.Tensor):
        return [output]
    if hasattr(output, "to_tuple"):
        output = output.to_tuple()
    if isinstance(output, (tuple, list)):
        return [t for item in output for t in tensors_of(item)]
    if isinstance(output, dict):
        return [t for item in output.values() for t in tensors_of(item)]
    return []


def loss_of(output) -> torch.Tensor:
    return sum(t.float().pow(2).mean() for t in tensors_of(output) if t.is_floating_point())


def live_op_count(gm: torch.fx.GraphModule) -> int:
    """The ops of a captured graph that compute something: call nodes after dead-code
    elimination (framejit drops an unused pure op, such as transformers' `head_arange`,
    where torch.compile's graph keeps it), so the two are counted alike."""
    graph = torch.fx.Graph()
    graph.output(graph.graph_copy(gm.graph, {}))
    graph.eliminate_dead_code()
    return sum(1 for n in graph.nodes if n.op in ("call_function", "call_method", "call_module"))
