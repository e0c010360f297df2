"""The ground floor for reading text; every stage imports it, and it imports nothing of ours.

``cjk`` what a CJK character is; ``sentences`` where sentences end and how long ones are cut;
``words`` tokens, stems and stop words; ``entities`` names, titles and codes a text mentions;
``facts`` the key facts (numbers, dates, versions, codes, names) a text states; ``relative_time``
relative time ("yesterday", 上周五) resolved against a reference day.
"""
