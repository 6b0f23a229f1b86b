"""The module-by-module call chain of ``TopTwo2().fit(A)`` (issue 23: "visit each module
once, in order").

Traces every Python-level call made inside the package during one fit (``sys.setprofile``),
keeps the calls into ``toptwo`` modules, and collapses consecutive calls in the same module
into one stop. Prints the chain, the number of stops, the number of distinct modules and
how many stops return to a module already visited.

    python benchmarks/call_chain.py            # the installed/importable toptwo
"""

from __future__ import annotations

import sys
from collections import Counter

import numpy as np

import toptwo


#: methods of the data object: reading A's derived arrays (counts, CSR form) is data
#: access, not a step of the algorithm; ``--without-data-access`` leaves them out
DATA_ACCESS = ("Responses.", "_FitView.", "LabelBlocks.")


def chain(fit, without_data_access: bool = False) -> list[str]:
    mods: list[str] = []

    def prof(frame, event, arg):
        if event != "call":
            return
        name = frame.f_globals.get("__name__", "")
        if without_data_access and frame.f_code.co_qualname.startswith(DATA_ACCESS):
            return
        if name.startswith("toptwo"):
            if not mods or mods[-1] != name:
                mods.append(name)

    sys.setprofile(prof)
    try:
        fit()
    finally:
        sys.setprofile(None)
    return mods


def main() -> None:
    model = toptwo.TopTwoModel.scenario("hard", n_workers=50, n_tasks=300, n_labels=5, rng=0)
    A = model.sample(0.3, rng=1)
    dense = np.asarray(A.toarray())          # what a user passes: a dense array
    for without in (False, True):
        stops = chain(lambda: toptwo.TopTwo2().fit(dense, 5), without)
        visits = Counter(stops)
        print("\n" + ("without data access (Responses/LabelBlocks methods)" if without
                      else "every call"))
        print(" -> ".join(s.replace("toptwo.", "") for s in stops))
        print(f"stops: {len(stops)}; modules: {len(visits)}; "
              f"returns to a module already visited: {len(stops) - len(visits)}")
        for mod, k in visits.most_common():
            print(f"  {mod}: {k}")


if __name__ == "__main__":
    main()
