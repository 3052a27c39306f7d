"""``memory-router route``: explain how one prompt is scored and what the hook would inject."""

import sys

from harness import options
from harness.context import as_typed, context_for, route_json, typed_words


def cmd_route(args):
    from harness.output import console, print_json, table

    ctx = context_for(args.clusters, args.config, quiet=args.json)
    decision = ctx.route(args.prompt)
    for _where, message in ctx.skipped_rows():  # the whole line, fix included: for the person running route
        print(f"memory-router route: {message}; the hook skips that row and uses the rest", file=sys.stderr)
    if args.json:
        print_json(route_json(ctx, decision))
        return 0
    out = console()
    # the router matches stems (``galax``); the reader typed words (``galaxy``): show both
    typed = typed_words(args.prompt)
    rows = [
        (d["cluster_id"], d["score"], ", ".join(as_typed(d["tag_hits"], typed)) or "-",
         ", ".join(as_typed(d["member_hits"], typed)) or "-", "yes" if d["cluster_id"] in decision["routed"] else "")
        for d in decision["scores"]
    ]
    out.print(table(f"Scores by the {decision['provider']} provider ({floor_text(decision)}; {len(ctx.index)} "
                    f"clusters, {len(decision['scores'])} scored above 0)",
                    ["cluster", "score", "tag hits", "member hits", "routed"], rows,
                    no_wrap=("cluster", "score")))
    out.print(f"clusters: {ctx.cluster_path}", markup=False, soft_wrap=True)
    out.print(f"provider: {decision['provider']}; confidence {decision['confidence']:.2f}; "
              f"{decision['explanation']}", markup=False)
    out.print(f"prompt words (as typed; in brackets the stem matched, where it differs): "
              f"{', '.join(as_typed(decision['prompt_tokens'], typed)) or '(none)'}", markup=False)
    out.print(f"top {decision['top_score']}, second {decision['second_score']}, "
              f"margin over floor {decision['margin_over_floor']}, lead over second {decision['lead_over_second']}")
    veto = decision.get("veto")
    if veto and veto["vetoed"]:
        from harness.context import name_exemplars

        named = name_exemplars(ctx, veto, with_text=True)
        nearest, best = named["nearest_negative"], named["best_member_exemplar"]
        if veto.get("rule") == "floor":
            out.print(f"vetoed by veto_floor: no routed member's own exemplar reaches {veto['floor']:.2f}"
                      + (f" (the best, {best.get('slug')}, is at {best['similarity']:.2f})" if best else
                         " (none shares a word with the prompt)"), markup=False)
        else:
            out.print("vetoed: " + (f"nearest {nearest['kind'].replace('_', '-')} {nearest['text']!r} "
                                    f"({nearest['similarity']:.2f})" if nearest else
                                    "no routed member's exemplar is near")
                      + (f"; the routed members' best {best.get('slug')} ({best['similarity']:.2f})" if best else ""),
                      markup=False)
    if decision["additional_context"] is None:
        out.print("routed: nothing (the hook would print nothing)")
    else:
        out.print(f"routed: {', '.join(decision['routed'])}")
        out.print("additionalContext the hook would emit:", style="bold")
        # Plain print, never the console: rich word-wraps to the terminal (80 columns when piped),
        # and this text must be the exact bytes the hook would send.
        print(decision["additional_context"], flush=True)
    return 0


# Each built-in provider reads its own floor setting: `--help` lists them all, and a route that
# printed only "floor 8.0" left the reader to guess why the score_floor = 3 shown there did not apply.
FLOOR_SETTINGS = {"spec": "score_floor", "weighted": "weighted_floor"}
# The weighted provider routing on an utterances file (its decision then carries "coverage").
UTTERANCE_FLOOR = "utterance_floor"


def floor_text(decision):
    """``floor 8.0 = weighted_floor`` for a built-in provider (``utterance_floor`` when it routed on
    utterances), else the provider's own floor."""
    setting = FLOOR_SETTINGS.get(decision["provider"])
    if setting is None:
        return f"floor {decision['floor']}, the provider's own"
    if decision["provider"] == "weighted" and "coverage" in decision:
        setting = UTTERANCE_FLOOR
    return f"floor {decision['floor']} = {setting}"


def register(subparsers):
    route = subparsers.add_parser(
        "route", help="explain how one prompt is scored and what the hook would inject",
        description="Scores PROMPT against every cluster: each cluster's score with its matched tag and "
                    "member tokens, the floor, the margins, the chosen clusters and the exact "
                    "additionalContext the hook would emit. --json gives the stable shape in docs/router.md.")
    route.add_argument("prompt", metavar="PROMPT", help="the prompt text, quoted as one argument")
    options.clusters_and_config(route)
    options.json_output(route)
    route.set_defaults(handler=cmd_route)
