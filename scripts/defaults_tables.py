#!/usr/bin/env python3
"""The headline tables (README, docs/ranking.md) from results/defaults/ (scripts/defaults.sh):
every set clean and misspelt, each leg alone and hybrid with RRF and with the blend (the
default), the blend paired with RRF per query (randomization test, 10,000 sign flips, fixed
seed, in `braid eval --baseline`); then the misspelt rows over the clean ones."""
import json
import os
D=os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'results', 'defaults') + os.sep
names={'scifact':'SciFact','nfcorpus':'NFCorpus','cranfield':'Cranfield','cacm':'CACM','npl':'NPL'}
def runs(f): return {r['mode']:r for r in json.load(open(f))}
def c(r,base=True):
    v=r.get('vs'); s=f"{r['ndcg@10']:.4f}"
    star = "\\*" if v and v['p_value'] < 0.05 else ""
    if v and base: s+=f" ({v['delta']:+.4f}{star})"
    return s
print("| set (queries) | lexical | fuzzy | semantic | hybrid, RRF | **hybrid, blend** (default) |\n|---|---:|---:|---:|---:|---:|")
rows2=[]
for d in names:
    r=runs(D+d+'.json'); m=runs(D+d+'-misspelt.json')
    print(f"| {names[d]} ({r['hybrid']['queries']}) | {c(r['lexical'],0)} | {c(r['fuzzy'],0)} | {c(r['semantic'],0)} | {c(r['hybrid/rrf'])} | **{c(r['hybrid'])}** |")
    rows2.append((d,r,m))
for d,r,m in rows2:
    print(f"| {names[d]}, one real misspelling per query ({m['hybrid+misspelt']['queries']}) | | | | {c(m['hybrid/rrf+misspelt'])} | **{c(m['hybrid+misspelt'])}** |")
# Misspelt over clean two ways: against every clean query (the table's rows), and against the
# clean runs of the very queries that got a misspelling.
def same_queries(clean, misspelt):
    ids=list(misspelt['per_query'])
    return sum(clean['per_query'][q] for q in ids)/len(ids)
print("\n| set | misspelt / clean, hybrid | misspelt / clean on the same queries, hybrid |\n|---|---:|---:|")
for d,r,m in rows2:
    mis=m['hybrid+misspelt']['ndcg@10']
    print(f"| {names[d]} | {mis/r['hybrid']['ndcg@10']:.3f} | {mis/same_queries(r['hybrid'],m['hybrid+misspelt']):.3f} |")
