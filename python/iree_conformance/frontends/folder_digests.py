"""Source digests of the case-folder kinds whose exports are those of an older source:
``case_folder.source_digest`` keys a store with the older digest while the kind's source
is the one named here, so a store warmed by the older code is not exported (nor compiled)
again. Not part of the digest itself; an entry stops applying when the source changes.

- d9d75bc (jax_export/tree.py and torch_export/tree.py, one copy each) -> one
  ``case_folder`` (issue 54): the same listing and exports, byte for byte.
"""

from __future__ import annotations

#: kind -> {its source's digest now: the digest its store entries were made under}
SAME_AS: dict[str, dict[str, str]] = {
    "jax": {
        "b4748194fa7066c672aecd8fa40e3071eff250dddbc9d54778d4aa5c284301bb": "1c985a7485721969edb00a0e552fd29855802b0b5ce6a829695ca9d3923cf2f7"
    },
    "torch": {
        "e757e81f7388ec1399c16825ffb3cdb8fbb5a37db97834404fda2322daef4dc5": "1964b1f8dfbf5fb936fde72c5e267e0d710b5be5d71d06f956cae9013a2180ed"
    },
}
