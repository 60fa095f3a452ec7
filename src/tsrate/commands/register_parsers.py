"""The options of ``tsrate register-llm`` (its body: :mod:`tsrate.commands.register`)."""

from __future__ import annotations

from tsrate.commands.flags import add_lock_timeout
from tsrate.commands.register import check_register_llm, cmd_register_llm


def add_register_commands(sub) -> None:  # noqa: ANN001 - argparse's subparsers action
    """Add ``register-llm`` to ``tsrate``'s sub-commands."""
    llm = sub.add_parser(
        "register-llm",
        help="rate your own OpenAI-compatible language model under its own system id",
    )
    llm.add_argument("system", metavar="ID", help="its new system id (e.g. my_llm)")
    llm.add_argument(
        "--base-url", required=True, help="the server's root, ending in /v1 (vLLM, Ollama, ...)"
    )
    llm.add_argument("--model", required=True, help="the model name the server serves")
    llm.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="the NAME of the environment variable holding its key (never the key)",
    )
    llm.add_argument(
        "--image", action="store_true", help="numeric+image prompt (the window's line plot too)"
    )
    llm.add_argument("--display-name", metavar="TEXT", help="its name in reports (default: ID)")
    add_lock_timeout(llm)
    llm.set_defaults(func=cmd_register_llm, writes_warehouse=True)
    llm.set_defaults(before_lock=check_register_llm)  # refused before the lock, always
