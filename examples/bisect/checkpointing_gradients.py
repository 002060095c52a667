"""Do checkpointed layers get gradients when the input embeddings are frozen?

The LoRA situation (frozen base model, adapters inside the decoder layers) with
``model.gradient_checkpointing_enable()`` and no arguments. transformers used
reentrant checkpointing by default (``use_reentrant=True``) up to 4.57.x: a
reentrant checkpoint whose inputs do not require grad passes no gradient to the
parameters inside it (torch warns "None of the inputs have requires_grad=True"),
so the layers silently stop training unless ``enable_input_require_grads()`` is
called. transformers 5.0.0 made non-reentrant checkpointing the default.

Exit 0 (good): layer 0 gets a gradient. Exit 1 (bad): it does not.
Exit 125 (untestable): anything that stops the measurement (an import error, say).

    nox -s bisect -- --package transformers --bad 4.57.5 --good 5.1.0 \
        --find first-good --pin torch==2.13.0 --script examples/bisect/checkpointing_gradients.py
"""

import sys
import warnings


def layer_gets_gradient() -> bool:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=64,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=32,
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(config)
    model.get_input_embeddings().weight.requires_grad_(False)  # the frozen base
    model.gradient_checkpointing_enable()  # the default under test
    model.train()
    ids = torch.randint(0, config.vocab_size, (2, 8))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the reentrant case warns; the exit code says it
        model(input_ids=ids, labels=ids).loss.backward()
    return model.model.layers[0].self_attn.q_proj.weight.grad is not None


try:
    gets_gradient = layer_gets_gradient()
except Exception as err:  # could not measure (import error, API missing): untestable
    print(f"untestable: {type(err).__name__}: {err}")
    sys.exit(125)
print(f"layer 0 gets a gradient: {gets_gradient}")
sys.exit(0 if gets_gradient else 1)
