"""Source digests of the case-folder kinds whose exports are those of an older source:
``case_folder.source_digest`` keys a store with the older digest while the kind's source
is the one named here, so a store warmed by the older code is not exported (nor compiled)
again. Not part of the digest itself; an entry stops applying when the source changes.

- d9d75bc (jax_export/tree.py and torch_export/tree.py, one copy each) -> one
  ``case_folder`` (issue 54): the same listing and exports, byte for byte. torch's
  exports changed since (issue 55: strict export, Python scalars, constant outputs), so
  its entries were made again once.
"""

from __future__ import annotations

#: kind -> {its source's digest now: the digest its store entries were made under}
SAME_AS: dict[str, dict[str, str]] = {
    "jax": {
        "585720e84cdf462d8056ab86209fed4c4ace070d7820b17109b3e7665adfc591": "1c985a7485721969edb00a0e552fd29855802b0b5ce6a829695ca9d3923cf2f7"
    },
}
