"""Run inside the local-model venv (not the project's): start llama.cpp's server through
xllamacpp's prebuilt wheel and keep it up until stdin closes or the process is killed.

    python serve.py MODEL.gguf PORT CONTEXT_TOKENS

The settings are llama-server's ``-c CONTEXT_TOKENS -np 1 -t 2 --jinja --temp 0 --seed 42
--no-warmup --host 127.0.0.1 --port PORT --chat-template`` :data:`GEMMA_TURNS`. The GGUF
carries no chat template, so llama.cpp would fall back to ChatML, a prompt format Gemma never
saw; and with ``--jinja`` a built-in name (``gemma``) is taken as the template's text, so the
turns are written out here. Gemma has no system or tool role: the tools
(name, description, JSON schema) and the system messages open the first user turn, in that
order, so the prefix stays the same from call to call; a tool result is a user turn. Gemma has no
tool-call syntax either: the template asks for a bare JSON object, which the llamacpp preset
also demands by a grammar (edge/providers/constrained.py) and the agent reads as a call."""

import sys

import xllamacpp

GEMMA_TURNS = r"""{{ bos_token }}
{%- set ns = namespace(preamble='') -%}
{%- if tools -%}
{%- set ns.preamble = 'You can call these tools. To call one, answer with only a JSON object: '
    ~ '{"name": "<tool>", "arguments": {...}}\n' -%}
{%- for tool in tools -%}
{%- set f = tool['function'] -%}
{%- set ns.preamble = ns.preamble ~ '- ' ~ f['name'] ~ ': ' ~ (f['description'] or '')
    ~ ' Arguments: ' ~ (f['parameters'] | tojson) ~ '\n' -%}
{%- endfor -%}
{%- set ns.preamble = ns.preamble ~ '\n' -%}
{%- endif -%}
{%- for message in messages -%}
{%- if message['role'] == 'system' -%}
{%- set ns.preamble = ns.preamble ~ message['content'] ~ '\n\n' -%}
{%- else -%}
{%- set role = 'model' if message['role'] == 'assistant' else 'user' -%}
<start_of_turn>{{ role }}
{% if role == 'user' %}{{ ns.preamble }}{% set ns.preamble = '' %}{% endif -%}
{% if message['role'] == 'tool' %}Tool result: {% endif %}{{ message['content'] or '' }}
{%- if message['tool_calls'] is defined and message['tool_calls'] -%}
{%- for call in message['tool_calls'] -%}
{"name": "{{ call['function']['name'] }}", "arguments": {{ call['function']['arguments']
  if call['function']['arguments'] is string else call['function']['arguments'] | tojson }}}
{%- endfor -%}
{%- endif %}<end_of_turn>
{% endif -%}
{%- endfor -%}
{%- if add_generation_prompt %}<start_of_turn>model
{% endif -%}"""


def main() -> None:
    model, port, context = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    params = xllamacpp.CommonParams()
    params.model.path = model
    params.n_ctx = context
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
