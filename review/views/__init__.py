"""The review dashboard, one module a screen (docs/dashboard.md): `projects`, `inbox`, `decisions`,
`memory`, `sessions`, `told` (what agents were told), `mirror` and `search` (the project's one search
box), with what they share in `base`.

Every view checks membership through `review.access`, checks a post's shape with a form from
`review.forms`, and writes through `ledger.services`. A list answers an htmx request with its region
only (`base.render_list`); an action answers htmx with the fragment to swap and a plain form post with
a redirect back to where it came from (post/redirect/get), so everything works without JavaScript too.
"""
