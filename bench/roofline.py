# ===- bench/roofline.py - build and run the machine-limit microbenchmarks ---===#
# Compiles bench/roofline.cc with `g++ -O3 -march=native -pthread` into the
# output folder and runs it: memory read bandwidth and fp32 / bf16 / int8 peak
# throughput for each thread count. Also the ideal time of a workload,
# max(flops / peak, bytes / bandwidth), that bench.py divides by the measured
# time to give "fraction of roofline".
import json
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))


def measure(out_dir, threads):
    exe = os.path.join(out_dir, "roofline")
    src = os.path.join(HERE, "roofline.cc")
    sources = [src, os.path.join(HERE, "read_bandwidth.h")]
    if not os.path.exists(exe) or os.path.getmtime(exe) < max(map(os.path.getmtime, sources)):
        subprocess.run(["g++", "-O3", "-march=native", "-pthread", "-std=c++17", src, "-o", exe],
                       check=True)
    r = subprocess.run([exe] + [str(t) for t in threads], check=True, capture_output=True,
                       text=True)
    data = json.loads(r.stdout)
    return {res["threads"]: res for res in data["results"]}, data["isa"]


def highest(probes):
    """Each limit's highest reading over several measure() results (None
    where a probe had none)."""
    out = {}
    for t in probes[0]:
        out[t] = dict(probes[0][t])
        for key, value in out[t].items():
            if isinstance(value, (int, float)) and key != "threads":
                values = [p[t][key] for p in probes if p[t].get(key) is not None]
                out[t][key] = max(values) if values else None
    return out


def ideal_seconds(limits, flops, nbytes):
    """Lower bound on time from the fp32 peak and read bandwidth."""
    return max(flops / (limits["fp32_gflops"] * 1e9), nbytes / (limits["read_gbps"] * 1e9))

