"""One set of rules for a pipeline's sockets: where the query goes, where ``top_k`` goes, which output holds
the ranked documents, and where an indexing pipeline takes its documents.

Every part of the package that runs a user's pipeline (``irmetrics beir``, the feedback replay, and the judges
and interleaving to come) finds, checks and explains sockets here, so a pipeline that one accepts the
others accept, with the same words when they refuse it. The rules:

* **Query inputs**: the sockets the caller names, each an open input of the pipeline; by default every
  open input named ``query`` or ``text`` whose type is ``str``. None found is an error.
* **top_k inputs**: the sockets named, by default every open input named ``top_k``.
* **Nothing left unfilled**: a mandatory open input that neither the query, ``top_k`` nor the caller's own
  extra inputs fill is an error naming it (the pipeline would fail on its first query otherwise).
* **Output**: the socket named (its component must exist; a connected socket is read through
  ``include_outputs_from``), by default the one unconnected output named ``documents``; none or several is an
  error listing them.
* **Documents inputs** (indexing): every open input named ``documents``; no other mandatory open input.

A socket is written ``"component.socket"``. How the user names sockets differs by caller (a BEIR
pipeline's ``metadata.irmetrics`` block, the replay's keyword arguments, a CLI option): :class:`Naming`
carries those names, so that every message points at the option the user can change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import PipelineError

Socket = tuple[str, str]


@dataclass(frozen=True)
class Naming:
    """How a caller's users name sockets, for the messages: ``query``, ``top_k`` and ``output`` are the
    options (``"metadata.irmetrics.query_inputs"``, ``"query_input="``...), ``job`` what fills the inputs."""

    query: str
    top_k: str
    output: str
    job: str


#: A BEIR pipeline's ``metadata.irmetrics`` block.
BEIR_NAMING = Naming(
    query="metadata.irmetrics.query_inputs",
    top_k="metadata.irmetrics.top_k_inputs",
    output="metadata.irmetrics.output",
    job="a BEIR run",
)
#: The keyword arguments of :func:`~haystack_irmetrics.feedback.replay_pipeline` (``--query-input`` and
#: ``--pipeline-output`` on the command line).
REPLAY_NAMING = Naming(query="query_input", top_k="top_k", output="output", job="the replay")


@dataclass(frozen=True)
class PipelineSockets:
    """Where a pipeline takes the query and ``top_k`` and gives the ranked documents; found once by
    :func:`find_sockets`, then used for every query."""

    query: tuple[Socket, ...]
    top_k: tuple[Socket, ...]
    output: Socket
    #: Whether :attr:`output` is an unconnected output (``Pipeline.run`` returns it without being asked).
    output_is_open: bool = True

    @property
    def include_outputs_from(self) -> set[str] | None:
        """What ``Pipeline.run`` must be asked to return besides its open outputs."""
        return None if self.output_is_open else {self.output[0]}

    def inputs(
        self, query: str, top_k: int | None = None, extra: Mapping[str, Mapping[str, Any]] | None = None
    ) -> dict[str, dict[str, Any]]:
        """The ``Pipeline.run`` data of one query: the text on every query input, ``top_k`` (when given) on
        every ``top_k`` input, then the caller's ``extra`` inputs (``{component: {socket: value}}``)."""
        data = nest(self.query, query)
        if top_k is not None:
            for comp, socket in self.top_k:
                data.setdefault(comp, {})[socket] = top_k
        for comp, values in (extra or {}).items():
            data.setdefault(comp, {}).update(values)
        return data


def parse_sockets(values: Any, option: str, source: str) -> list[Socket]:
    """``"component.socket"`` or a list of them, as ``(component, socket)`` pairs.

    :raises PipelineError: naming ``option`` and ``source`` for anything else.
    """
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, list | tuple):
        raise PipelineError(f"{option} of {source}: expected 'component.socket' or a list of them, got {values!r}")
    out = []
    for value in values:
        comp, dot, socket = str(value).partition(".")
        if not dot or not comp or not socket:
            raise PipelineError(f"{option} of {source}: expected 'component.socket', got {value!r}")
        out.append((comp, socket))
    return out


def find_sockets(
    pipe: Any,
    *,
    query: Any = None,
    top_k: Any = None,
    output: Any = None,
    source: str = "the pipeline",
    naming: Naming = REPLAY_NAMING,
    filled: Iterable[Socket] = (),
) -> PipelineSockets:
    """Find and check a retrieval pipeline's sockets by the rules of this module.

    :param pipe: a :class:`haystack.Pipeline`.
    :param query: the query inputs the user named (``"component.socket"`` or a list), or None for the default.
    :param top_k: the ``top_k`` inputs named, or None for the default.
    :param output: the ranked-documents output named, or None for the default.
    :param source: what the pipeline is called in messages (a YAML path, ``builtin:bm25``...).
    :param naming: the options the user names sockets with, for the messages.
    :param filled: inputs the caller fills itself (the replay's ``run_kwargs``).
    :raises PipelineError: for a socket that is not there, a query input missing, an input left unfilled, or
        an output that is missing or ambiguous; each message names the option that fixes it.
    """
    inputs = pipe.inputs()
    if query is not None:
        query_sockets = parse_sockets(query, naming.query, source)
    else:
        query_sockets = [
            (comp, name)
            for comp, sockets in inputs.items()
            for name, info in sockets.items()
            if name in ("query", "text") and info.get("type") is str
        ]
    if not query_sockets:
        raise PipelineError(
            f"{source} has no open input named 'query' or 'text' to send the query to; "
            f"name it with {_how(naming.query, list_of=True)}"
        )
    for comp, socket in query_sockets:
        if socket not in inputs.get(comp, {}):
            raise PipelineError(f"{source}: {comp}.{socket} is not an open input of the pipeline")
    if top_k is not None:
        top_k_sockets = parse_sockets(top_k, naming.top_k, source)
    else:
        top_k_sockets = [(comp, "top_k") for comp, sockets in inputs.items() if "top_k" in sockets]
    fed = {*query_sockets, *top_k_sockets, *filled}
    unfed = [
        f"{comp}.{name}"
        for comp, sockets in inputs.items()
        for name, info in sockets.items()
        if info.get("is_mandatory") and (comp, name) not in fed
    ]
    if unfed:
        raise PipelineError(f"{source} has mandatory inputs that {naming.job} does not fill: {', '.join(unfed)}")
    out = _find_output(pipe, output, source, naming)
    return PipelineSockets(tuple(query_sockets), tuple(top_k_sockets), out, out[1] in pipe.outputs().get(out[0], {}))


def _find_output(pipe: Any, output: Any, source: str, naming: Naming) -> Socket:
    if output is not None:
        sockets = parse_sockets(output, naming.output, source)
        if len(sockets) != 1:
            raise PipelineError(f"{naming.output} of {source} must name one socket, got {output!r}")
        comp, socket = sockets[0]
        try:
            pipe.get_component(comp)
        except ValueError:
            raise PipelineError(f"{naming.output} of {source} names unknown component {comp!r}") from None
        return comp, socket
    found = [(comp, name) for comp, sockets in pipe.outputs().items() for name in sockets if name == "documents"]
    if len(found) != 1:
        names = ", ".join(f"{c}.{s}" for c, s in found) or "none"
        raise PipelineError(
            f"{source} must have exactly one unconnected output named 'documents' (found: {names}); "
            f"name it with {_how(naming.output)}"
        )
    return found[0]


def document_inputs(pipe: Any, source: str) -> list[Socket]:
    """The open ``documents`` inputs of an indexing pipeline.

    :raises PipelineError: when there is none, or another mandatory input is open.
    """
    inputs = pipe.inputs()
    found = [(comp, "documents") for comp, sockets in inputs.items() if "documents" in sockets]
    if not found:
        raise PipelineError(f"the indexing pipeline of {source} has no open input named 'documents'")
    unfed = [
        f"{comp}.{name}"
        for comp, sockets in inputs.items()
        for name, info in sockets.items()
        if info.get("is_mandatory") and name != "documents"
    ]
    if unfed:
        raise PipelineError(
            f"the indexing pipeline of {source} has mandatory inputs besides documents: {', '.join(unfed)}"
        )
    return found


def nest(targets: Iterable[Socket], value: Any) -> dict[str, dict[str, Any]]:
    """``{component: {socket: value}}`` for every target socket."""
    data: dict[str, dict[str, Any]] = {}
    for comp, socket in targets:
        data.setdefault(comp, {})[socket] = value
    return data


def _how(option: str, list_of: bool = False) -> str:
    """How to name a socket with ``option``: a YAML key (``metadata...: ['component.socket']``) or a keyword."""
    if option.startswith("metadata."):
        return f"{option}: {['component.socket'] if list_of else repr('component.socket')}"
    return f"{option}='component.socket'"


__all__ = [
    "BEIR_NAMING",
    "REPLAY_NAMING",
    "Naming",
    "PipelineSockets",
    "Socket",
    "document_inputs",
    "find_sockets",
    "nest",
    "parse_sockets",
]
