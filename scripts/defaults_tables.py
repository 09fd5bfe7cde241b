#!/usr/bin/env python3
"""Misspelt over clean per set, from results/defaults/ (scripts/defaults.sh): the default's
nDCG@10 with one real misspelling per query over its clean nDCG@10, against every clean query
and against the clean runs of the very queries that got a misspelling. (The headline table
itself is `braid-report readme`'s `defaults` marker.)"""
import json
import os
D=os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'results', 'defaults') + os.sep
names={'scifact':'SciFact','nfcorpus':'NFCorpus','cranfield':'Cranfield','cacm':'CACM','npl':'NPL'}
def runs(f): return {r['mode']:r for r in json.load(open(f))}
rows2=[]
for d in names:
    rows2.append((d,runs(D+d+'.json'),runs(D+d+'-misspelt.json')))
# Misspelt over clean two ways: against every clean query (the table's rows), and against the
# clean runs of the very queries that got a misspelling.
def same_queries(clean, misspelt):
    ids=list(misspelt['per_query'])
    return sum(clean['per_query'][q] for q in ids)/len(ids)
print("\n| set | misspelt / clean, hybrid | misspelt / clean on the same queries, hybrid |\n|---|---:|---:|")
for d,r,m in rows2:
    mis=m['hybrid+misspelt']['ndcg@10']
    print(f"| {names[d]} | {mis/r['hybrid']['ndcg@10']:.3f} | {mis/same_queries(r['hybrid'],m['hybrid+misspelt']):.3f} |")
