"""Grade export with one column per exercise and per part (an nbgrader export plugin).

nbgrader's default ``nbgrader export`` writes one row per (assignment, student) with the
assignment's total. With the six exercises as six assignments, this plugin writes one
row per student and the columns

``student_id, last_name, first_name, email, <assignment>, <assignment>/<grade id>, ...,
total, max_total``

(each assignment's score after the late penalty, then each graded part's score; a part
not yet graded by hand is left empty, an autograded part that has no score, because its
notebook never ran to it (a kernel killed by the student's code), reads "not autograded";
a missing submission scores 0)::

    nbgrader export --exporter=toptwo.teaching.export.PartsExportPlugin --to grades.csv

Requires nbgrader (``pip install "toptwo[teaching]"``).
"""

from __future__ import annotations

import csv
from typing import Any

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import ExportPlugin

__all__ = ["PartsExportPlugin"]


class PartsExportPlugin(ExportPlugin):
    """One row per student: each exercise's score and each graded part's score."""

    def export(self, gradebook: Gradebook) -> None:
        dest = self.to or "grades.csv"
        wanted_a = {str(a) for a in self.assignment}
        wanted_s = {str(s) for s in self.student}
        assignments = sorted((a for a in gradebook.assignments
                              if not wanted_a or a.name in wanted_a), key=lambda a: a.name)
        parts: dict[str, list[tuple[str, str, float]]] = {}
        for a in assignments:
            parts[a.name] = [(nb.name, cell.name, float(cell.max_score))
                             for nb in sorted(a.notebooks, key=lambda n: n.name)
                             for cell in sorted(nb.grade_cells, key=lambda c: c.name)]
        header = ["student_id", "last_name", "first_name", "email"]
        for a in assignments:
            header.append(a.name)
            header += [f"{a.name}/{cell}" for _, cell, _ in parts[a.name]]
        header += ["total", "max_total"]
        self.log.info("Exporting per-part grades to %s", dest)
        with open(dest, "w", newline="", encoding="utf-8") as fh:
            out = csv.writer(fh)
            out.writerow(header)
            for student in sorted(gradebook.students, key=lambda s: s.id):
                if wanted_s and student.id not in wanted_s:
                    continue
                row: list[Any] = [student.id, student.last_name or "", student.first_name or "",
                                  student.email or ""]
                total = max_total = 0.0
                for a in assignments:
                    max_total += float(a.max_score)
                    try:
                        sub = gradebook.find_submission(a.name, student.id)
                    except MissingEntry:
                        row += [0.0] + [0.0] * len(parts[a.name])
                        continue
                    score = max(0.0, float(sub.score) - float(sub.late_submission_penalty or 0))
                    total += score
                    row.append(score)
                    for nb_name, cell, _ in parts[a.name]:
                        grade = gradebook.find_grade(cell, nb_name, a.name, student.id)
                        if grade.score is not None and not grade.needs_manual_grade:
                            row.append(float(grade.score))
                        elif (getattr(grade.cell, "cell_type", "") == "code"
                              and grade.auto_score is None and grade.manual_score is None):
                            # an autograded part with no score: its notebook did not run to
                            # it (e.g. the kernel died); open that submission by hand
                            row.append("not autograded")
                        else:
                            row.append("")          # a hand-graded part not graded yet
                out.writerow(row + [total, max_total])
