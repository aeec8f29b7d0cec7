"""Run inside the local-model venv (not the project's): start llama.cpp's server through
xllamacpp's prebuilt wheel and keep it up until stdin closes or the process is killed.

    python serve.py MODEL.gguf PORT

The settings are llama-server's ``-c 4096 -np 1 -t 2 --jinja --chat-template gemma --temp 0
--seed 42 --no-warmup --host 127.0.0.1 --port PORT`` with ``--chat-template`` given
:data:`GEMMA_TURNS`. The GGUF carries no chat template, so llama.cpp would fall back to ChatML,
a prompt format Gemma never saw; and with ``--jinja`` a built-in name (``gemma``) is taken as the
template's text, so the turns are written out here. Gemma has no system or tool role: both are
user turns. The template has no tool syntax, so llama.cpp uses its generic tool format: it
describes the tools in the prompt and constrains the reply by a grammar to a JSON object, either
a tool call or a response, so a malformed call cannot be produced."""

import sys

import xllamacpp

CONTEXT_TOKENS = 4096
GEMMA_TURNS = (
    "{{ bos_token }}{% for message in messages %}"
    "{% set role = 'model' if message['role'] == 'assistant' else 'user' %}"
    "<start_of_turn>{{ role }}\n{{ message['content'] or '' }}<end_of_turn>\n"
    "{% endfor %}{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}")


def main() -> None:
    model, port = sys.argv[1], int(sys.argv[2])
    params = xllamacpp.CommonParams()
    params.model.path = model
    params.n_ctx = CONTEXT_TOKENS
    params.n_parallel = 1
    params.use_jinja = True
    params.chat_template = GEMMA_TURNS
    params.cpuparams.n_threads = 2
    params.cpuparams_batch.n_threads = 2
    params.port = port
    params.sampling.temp = 0.0
    params.sampling.seed = 42
    params.warmup = False
    server = xllamacpp.Server(params)
    print(f"listening {server.listening_address}", flush=True)
    sys.stdin.read()  # the test closes our stdin (or kills us) at teardown


if __name__ == "__main__":
    main()
