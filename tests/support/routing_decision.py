"""A routing decision the session-stage tests share: one cluster's five member lines, two of them
about setx and the Bash tool (the shape ``router.providers.provider.route`` returns, trimmed to what the
line selection reads)."""


def line(slug, hook, cluster="c1"):
    return {"cluster_id": cluster, "slug": slug, "hook": hook}


DECISION = {
    "routed": ["c1"],
    "total_member_lines": 5,
    "lines": [
        line("alpha_notes", "general notes about the project layout"),
        line("setx_cache", "setx variables are invisible to the bash tool until a new terminal"),
        line("bash_path", "the bash tool path differs from the user's terminal"),
        line("deploy_steps", "deploy with wrangler after the d1 migration"),
        line("misc", "other things"),
    ],
}
