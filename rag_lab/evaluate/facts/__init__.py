"""What a text states: its key facts (numbers, money, codes, years) and whether the chunk an answer
cites supports them. Offline checks under the metrics, the judge's silver labels and IR pooling."""
