#!/usr/bin/env python3
"""check.py: collscope's slowdown answers on jobs of the reference
simulator (tests/gpusim/sim.py) against the simulator's truth.

  check.py [--collscope PATH] [--keep] JOB...

Each JOB is a folder sim.py wrote (JOB/traces/rank<N>.json,
JOB/truth.json). For each: `collscope import -o JOB/cs JOB/traces`, then
`collscope report JOB/cs --format json`, and its `slowdown` object
(docs/report-json.md) against truth.json:

- S: collscope's S within 5 % (and 10 %) of the truth's S (actual over
  ideal median step, relative error |S - S_truth| / S_truth);
- the verdict and culprit: truth's expected_verdict and expected_culprit
  (`none` when the truth's S is under 1.10; `slow_worker` and the rank for
  a slow worker or link, `slow_stage` and `pp stage N` for a slow stage,
  `scattered` for a random imbalance); a job whose true S is within 0.03
  of the 1.10 floor is borderline: `none` or the fault's verdict both
  count as right;
- ideal <= actual: collscope's ideal_step_ns at most its actual_step_ns;
- a clean job (fault none): no verdict (`none`).

One line per job, then the summary and the floors: S within 5 % in 95 %
of the jobs and within 10 % in all; verdict and culprit right in 95 %; no
verdict on any clean job; ideal <= actual in all. Exit status: 0 all
floors met, 1 a floor missed, 2 bad usage or a job that could not be
checked (its line says why). The collscope binary: --collscope, else
$COLLSCOPE, else `collscope` on the PATH. --keep keeps JOB/cs (the
imported trace and report.json); else they are removed after the check.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

FLOOR = 1.10
BAND = 0.03


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    return p.returncode, p.stdout


def check_job(cs, job, keep):
    """The row of one job: a dict, or a string saying why it could not be checked."""
    tpath = os.path.join(job, "truth.json")
    try:
        with open(tpath) as f:
            truth = json.load(f)
    except (OSError, ValueError) as e:
        return "%s: cannot read the truth: %s" % (job, e)
    out = os.path.join(job, "cs")
    if os.path.islink(out):
        return "%s: %s is a symlink: not touched" % (job, out)
    if os.path.isdir(out):
        shutil.rmtree(out)
    rc, text = run([cs, "import", "-o", out, os.path.join(job, "traces")])
    if rc != 0:
        return "%s: collscope import failed (exit %d): %s" % (job, rc, text.strip().splitlines()[-1:] or "")
    rjson = os.path.join(out, "report.json")
    rc, text = run([cs, "report", out, "--format", "json", "-o", rjson])
    if rc != 0:
        return "%s: collscope report failed (exit %d): %s" % (job, rc, text.strip().splitlines()[-1:] or "")
    try:
        with open(rjson) as f:
            rep = json.load(f)
    except (OSError, ValueError) as e:
        return "%s: cannot read collscope's report: %s" % (job, e)
    if not keep:
        shutil.rmtree(out)
    sd = rep.get("slowdown")
    row = {"job": job, "fault": truth["fault"], "world": truth["world"], "S_true": truth["S"],
           "exp_verdict": truth["expected_verdict"], "exp_culprit": truth["expected_culprit"],
           "layout_true": "dp %d x pp %d x tp %d" % (truth["layout"]["dp"], truth["layout"]["pp"],
                                                    truth["layout"]["tp"]),
           "layout": (rep.get("layout") or {}).get("text", "none"),
           "layout_ok": [(rep.get("layout") or {}).get(k) for k in ("dp", "pp", "tp")] ==
           [truth["layout"][k] for k in ("dp", "pp", "tp")],
           "schedule": truth["config"]["schedule"],
           "step_err": abs((rep.get("steps") or {}).get("median_ns", 0) - truth["step_median_ns"]) /
           truth["step_median_ns"]}
    if not sd:
        row.update(S=None, err=None, verdict="(no slowdown)", culprit="", ideal_ok=False)
    else:
        S = sd.get("S")
        row.update(S=S, err=abs(S - truth["S"]) / truth["S"] if S is not None else None,
                   verdict=sd.get("verdict", ""), culprit=sd.get("culprit", ""),
                   ideal_ok=sd.get("ideal_step_ns") is not None and sd.get("actual_step_ns") is not None and
                   sd["ideal_step_ns"] <= sd["actual_step_ns"])
    right = row["verdict"] == row["exp_verdict"] and (row["exp_verdict"] not in ("slow_worker", "slow_stage") or
                                                      row["culprit"] == row["exp_culprit"])
    if not right and abs(truth["S"] - FLOOR) < BAND and truth["fault"] != "none":
        # borderline: none, or the fault's own verdict, both count
        fv = {"slow_worker": ("slow_worker", str((truth.get("culprit") or {}).get("rank"))),
              "slow_link": ("slow_worker", str((truth.get("culprit") or {}).get("rank"))),
              "slow_stage": ("slow_stage", "pp stage %s" % (truth.get("culprit") or {}).get("stage")),
              "imbalance": ("scattered", None), "transient": ("none", None)}.get(truth["fault"])
        right = row["verdict"] == "none" or (fv is not None and row["verdict"] == fv[0] and
                                             (fv[1] is None or row["culprit"] == fv[1]))
        row["borderline"] = True
    row["right"] = right
    row["clean_ok"] = truth["fault"] != "none" or row["verdict"] == "none"
    return row


def main(argv):
    ap = argparse.ArgumentParser(prog="check.py", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--collscope", default=os.environ.get("COLLSCOPE") or shutil.which("collscope"))
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--json", help="write the rows and the summary to this file as JSON")
    ap.add_argument("--append", metavar="JSONL", help="also append each job's row to this file (one JSON a line)")
    ap.add_argument("--from", dest="src", metavar="JSONL",
                    help="check nothing: print the table and floors of the rows in this file")
    ap.add_argument("--no-summary", action="store_true", help="the job lines only (exit status 0 unless an error)")
    ap.add_argument("jobs", nargs="*")
    a = ap.parse_args(argv[1:])
    if not a.src and not a.jobs:
        ap.error("no JOB given")
    if not a.src and (not a.collscope or not os.access(a.collscope, os.X_OK)):
        ap.error("no collscope binary: give --collscope PATH or set COLLSCOPE")
    rows, bad = [], []
    stored = []
    if a.src:
        try:
            with open(a.src) as f:
                stored = [json.loads(line) for line in f if line.strip()]
        except (OSError, ValueError) as e:
            ap.error("cannot read %s: %s" % (a.src, e))
    if not a.no_summary:
        print("%-28s %-13s %5s %-22s %-22s %7s %7s %6s  %-36s %s" %
              ("job", "fault", "ranks", "layout (true)", "layout (collscope)", "S true", "S", "err",
               "verdict (expected)", "ok"))
    for job in (stored if a.src else a.jobs):
        r = job if a.src else check_job(a.collscope, job, a.keep)
        if isinstance(r, str):
            print("ERROR " + r)
            bad.append(r)
            continue
        rows.append(r)
        if a.append:
            with open(a.append, "a") as f:
                f.write(json.dumps(r) + "\n")
        flags = []
        if r["err"] is None or r["err"] > 0.05:
            flags.append("S>5%" if r["err"] is not None and r["err"] <= 0.10 else "S>10%")
        if not r["right"]:
            flags.append("verdict")
        if not r["ideal_ok"]:
            flags.append("ideal>actual")
        if not r["clean_ok"]:
            flags.append("clean-verdict")
        v = "%s%s" % (r["verdict"], " " + r["culprit"] if r["culprit"] else "")
        e = "%s%s" % (r["exp_verdict"], " " + r["exp_culprit"] if r["exp_culprit"] else "")
        print("%-28s %-13s %5d %-22s %-22s %7.3f %7s %6s  %-36s %s" %
              (os.path.basename(os.path.normpath(r["job"]))[:28], r["fault"], r["world"], r["layout_true"],
               r["layout"][:22], r["S_true"], "%.3f" % r["S"] if r["S"] is not None else "-",
               "%.1f%%" % (100 * r["err"]) if r["err"] is not None else "-",
               (v + " (" + e + ")")[:36] + ("*" if r.get("borderline") else ""),
               "ok" if not flags else "MISS " + ",".join(flags)), flush=True)
    n = len(rows)
    if a.no_summary:
        return 2 if bad else 0
    if n == 0:
        print("check.py: no job could be checked")
        return 2
    w5 = sum(1 for r in rows if r["err"] is not None and r["err"] <= 0.05)
    w10 = sum(1 for r in rows if r["err"] is not None and r["err"] <= 0.10)
    right = sum(1 for r in rows if r["right"])
    clean = [r for r in rows if r["fault"] == "none"]
    clean_ok = sum(1 for r in clean if r["clean_ok"])
    ideal_ok = sum(1 for r in rows if r["ideal_ok"])
    layout_ok = sum(1 for r in rows if r["layout_ok"])
    floors = [("S within 5 % in 95 % of the jobs", w5 >= 0.95 * n, "%d/%d (%.0f %%)" % (w5, n, 100.0 * w5 / n)),
              ("S within 10 % in all", w10 == n, "%d/%d" % (w10, n)),
              ("verdict and culprit right in 95 %", right >= 0.95 * n, "%d/%d (%.0f %%)" % (right, n, 100.0 * right / n)),
              ("no verdict on a clean job", clean_ok == len(clean), "%d/%d" % (clean_ok, len(clean))),
              ("ideal <= actual in all", ideal_ok == n, "%d/%d" % (ideal_ok, n))]
    with_step = [r for r in rows if "step_err" in r]
    step_ok = sum(1 for r in with_step if r["step_err"] <= 0.01)
    print("summary: %d jobs%s; not floors: layout found right in %d/%d, measured median step within 1 %% of the "
          "truth's in %d/%d" % (n, ", %d could not be checked" % len(bad) if bad else "", layout_ok, n, step_ok,
                                len(with_step)))
    for name, ok, fig in floors:
        print("  %-36s %-14s %s" % (name, fig, "met" if ok else "MISSED"))
    by = {}
    for r in rows:
        x = by.setdefault(r["fault"], [0, 0, 0])
        x[0] += 1
        x[1] += r["err"] is not None and r["err"] <= 0.05
        x[2] += r["right"]
    print("  by fault: " + "; ".join("%s %d jobs, S within 5 %% %d, verdict right %d" % (k, v[0], v[1], v[2])
                                     for k, v in sorted(by.items())))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rows": rows, "errors": bad, "floors": [{"name": x, "met": ok, "figure": fig}
                                                               for x, ok, fig in floors]}, f, indent=1)
    if bad:
        return 2
    return 0 if all(ok for _, ok, _ in floors) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
