"""Whole-graph rules: no cycles at all, and warnings for unreachable nodes and dead ends."""

from __future__ import annotations

from contracts_kit import chain, check, codes, edge, errors, found, graph, node, only

from contracts.validate_graph_shape import is_acyclic, shortest_cycle, strongly_connected


def prompts(*ids: str) -> list[dict[str, object]]:
    return [node(i, "prompt", template="{input}") for i in ids]


def test_it_refuses_a_cycle_and_names_its_nodes() -> None:
    doc = chain(*prompts("a", "b", "c"))
    doc["edges"].append(edge("c", "a"))
    report = check(doc)
    assert errors(report) == [("cycle", None)]
    message = only(report, "cycle").message
    assert "'a' → 'b' → 'c' → 'a'" in message


def test_it_refuses_a_self_loop() -> None:
    doc = chain(*prompts("a"))
    doc["edges"].append(edge("a", "a"))
    assert "'a' → 'a'" in only(check(doc), "cycle").message


def test_it_refuses_a_back_edge_even_through_a_condition() -> None:
    # A loop must be a loop node over a published flow, never a wire back.
    doc = chain(node("check", "condition", expression="longer_than:100"), *prompts("shorten"))
    doc["edges"] = [edge("in", "check"), edge("check", "out"),
                    edge("check", "shorten", "false"), edge("shorten", "check")]
    assert errors(check(doc)) == [("cycle", None)]


def test_it_reports_each_separate_cycle_once() -> None:
    doc = chain(*prompts("a", "b", "c", "d"))
    doc["edges"] += [edge("b", "a"), edge("d", "c")]
    report = check(doc)
    assert codes(report) == ["cycle", "cycle"]
    assert "'a'" in report.issues[0].message and "'c'" in report.issues[1].message


def test_it_names_every_node_of_an_entangled_cycle() -> None:
    doc = chain(*prompts("a", "b", "c"))
    doc["edges"] += [edge("b", "a"), edge("c", "b")]
    message = only(check(doc), "cycle").message
    assert all(f"'{n}'" in message for n in "abc")


def test_it_accepts_diamonds_and_converging_branches() -> None:
    doc = graph([node("in", "input"), *prompts("a", "b"), node("j", "join"),
                 node("out", "output")],
                [edge("in", "a"), edge("in", "b"), edge("a", "j"), edge("b", "j"),
                 edge("in", "j"), edge("j", "out")])
    assert check(doc).runnable


def test_it_warns_about_nodes_no_path_from_the_input_reaches() -> None:
    doc = chain(*prompts("a"))
    doc["nodes"].append(prompts("stray")[0])
    doc["edges"].append(edge("stray", "out"))
    report = check(doc)
    assert report.runnable
    issue = only(report, "unreachable_node")
    assert (issue.severity, issue.path, issue.node_id) == ("warning", "nodes.3", "stray")


def test_it_warns_about_dead_ends() -> None:
    doc = chain(*prompts("a"))
    doc["nodes"].append(prompts("side")[0])
    doc["edges"].append(edge("a", "side"))
    report = check(doc)
    assert report.runnable
    assert found(report) == [("dead_end", "nodes.3")]


def test_it_counts_an_error_port_as_a_path() -> None:
    doc = chain(node("llm", "model"), *prompts("say"))
    doc["edges"] = [edge("in", "llm"), edge("llm", "out"), edge("llm", "say", "error"),
                    edge("say", "out")]
    assert check(doc).issues == []


def test_it_lets_an_unconnected_storage_node_start_a_path() -> None:
    doc = graph([node("in", "input"), node("faq", "storage", dataset="d"), node("j", "join"),
                 node("out", "output")],
                [edge("in", "j"), edge("faq", "j"), edge("j", "out")])
    assert check(doc).issues == []


def test_it_skips_reachability_without_an_input_or_output() -> None:
    doc = graph(prompts("a", "b"), [edge("a", "b")])
    assert found(check(doc)) == [("missing_input", None), ("missing_output", None)]


def test_it_ignores_wires_with_bad_ports_for_cycles() -> None:
    doc = chain(*prompts("a"))
    doc["edges"].append(edge("out", "in"))  # both ends are wrong ports
    assert "cycle" not in codes(check(doc))


def test_it_finds_groups_and_cycles_without_recursion() -> None:
    size = 5000
    ring = {str(i): [str((i + 1) % size)] for i in range(size)}
    assert not is_acyclic(ring)
    assert [len(g) for g in strongly_connected(ring)] == [size]
    assert len(shortest_cycle("0", set(ring), ring)) == size + 1
    line = {str(i): [str(i + 1)] if i + 1 < size else [] for i in range(size)}
    assert is_acyclic(line)
    assert all(len(g) == 1 for g in strongly_connected(line))
