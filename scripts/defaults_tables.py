#!/usr/bin/env python3
"""The headline tables (README, docs/ranking.md) from results/defaults/ (scripts/defaults.sh):
every set clean and misspelt, and auto against hybrid paired per query (randomization test,
10,000 sign flips, fixed seed)."""
import json,random
import os
D=os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'results', 'defaults') + os.sep
names={'scifact':'SciFact','nfcorpus':'NFCorpus','cranfield':'Cranfield','cacm':'CACM','npl':'NPL'}
def runs(f): return {r['mode']:r for r in json.load(open(f))}
def c(r,base=True):
    v=r.get('vs'); s=f"{r['ndcg@10']:.4f}"
    star = "\\*" if v and v['p_value'] < 0.05 else ""
    if v and base: s+=f" ({v['delta']:+.4f}{star})"
    return s
def paired(a,b,n=10000,seed=7):
    ids=[q for q in a['per_query'] if q in b['per_query']]
    d=[a['per_query'][q]-b['per_query'][q] for q in ids]
    m=sum(d)/len(d); rng=random.Random(seed); hits=0
    for _ in range(n):
        s=sum(x if rng.random()<0.5 else -x for x in d)/len(d)
        if abs(s)>=abs(m)-1e-12: hits+=1
    return m,(hits+1)/(n+1)
print("| set (queries) | lexical | fuzzy | semantic | hybrid, RRF | hybrid, blend | **auto** (default) |\n|---|---:|---:|---:|---:|---:|---:|")
rows2=[]
for d in names:
    r=runs(D+d+'.json'); m=runs(D+d+'-misspelt.json')
    print(f"| {names[d]} ({r['hybrid']['queries']}) | {c(r['lexical'],0)} | {c(r['fuzzy'],0)} | {c(r['semantic'],0)} | {c(r['hybrid/rrf'])} | {c(r['hybrid'])} | **{c(r['auto'])}** |")
    rows2.append((d,r,m))
for d,r,m in rows2:
    print(f"| {names[d]}, one real misspelling per query ({m['hybrid+misspelt']['queries']}) | | | | {c(m['hybrid/rrf+misspelt'])} | {c(m['hybrid+misspelt'])} | **{c(m['auto+misspelt'])}** |")
print("\nauto - hybrid (blend)")
# Misspelt over clean two ways: against every clean query (the table's rows), and against the
# clean runs of the very queries that got a misspelling (the paired comparison).
def same_queries(clean, misspelt):
    ids=list(misspelt['per_query'])
    return sum(clean['per_query'][q] for q in ids)/len(ids)
print("| set | clean: auto − hybrid (p) | misspelt: auto − hybrid (p) | misspelt / clean, auto | misspelt / clean on the same queries, auto |\n|---|---:|---:|---:|---:|")
for d,r,m in rows2:
    a=paired(r['auto'],r['hybrid']); b=paired(m['auto+misspelt'],m['hybrid+misspelt'])
    mis=m['auto+misspelt']['ndcg@10']
    print(f"| {names[d]} | {a[0]:+.4f} (p {a[1]:.2f}) | {b[0]:+.4f} (p {b[1]:.2f}) | {mis/r['auto']['ndcg@10']:.3f} | {mis/same_queries(r['auto'],m['auto+misspelt']):.3f} |")
