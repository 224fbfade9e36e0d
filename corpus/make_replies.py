"""Writes the sample replies in corpus/replies/ (run once; the files are the corpus).

Each reply's expected reading sits beside it as NAME.expected.json; regenerate
those with `MEMCITE_UPDATE_GOLDEN=1 pytest tests/test_golden.py` and review the diff.
"""

from pathlib import Path

O, C = "<oai-mem-citation>", "</oai-mem-citation>"  # noqa: E741
A = "019c6e27-e55b-73d1-87d8-4e01f1f75043"
B = "019c7714-3b77-74d1-9866-e1f484aae2ab"
HERE = Path(__file__).parent / "replies"


def block(entries: list[str], ids: list[str] | None = None) -> str:
    ids = [A] if ids is None else ids
    parts = [O]
    if entries:
        parts += ["<citation_entries>", *entries, "</citation_entries>"]
    if ids:
        parts += ["<rollout_ids>", *ids, "</rollout_ids>"]
    parts.append(C)
    return "\n".join(parts)


def answer(entries: list[str], ids: list[str] | None = None, prose: str = "Done.\n\n") -> str:
    return prose + block(entries, ids)


REPLIES = {
    # realistic replies
    "typical": answer(
        [
            "MEMORY.md:234-236|note=[responsesapi citation extraction code pointer]",
            "rollout_summaries/2026-02-17T21-23-02-LN3m-weekly_report.md:10-12|note=[weekly report format]",
        ],
        [A, B],
        "The weekly report uses the format you chose last time.\n\n",
    ),
    "no_block": "Plain answer with no memory used.\nSecond line.\n",
    "crlf_reply": answer(["MEMORY.md:1-2|note=[crlf]"], [A]).replace("\n", "\r\n"),
    "unicode_prose": answer(["skills/ünï/SKILL.md:3-9|note=[naïve café ✓]"], [A], "Voilà 😀 — fini.\n\n"),
    # docs/citation-format.md §4, the table
    "entry_plain": answer(["MEMORY.md:1-2|note=[x]"]),
    "entry_padded": answer(["  MEMORY.md : 3 - 5 |note=[  padded  ]  "]),
    "entry_windows_path": answer(["C:\\memories\\MEMORY.md:2-4|note=[ok]"]),
    "entry_empty_note": answer(["MEMORY.md:1-2|note=[]"]),
    "entry_brackets_in_note": answer(["MEMORY.md:1-2|note=[see [docs] here]"]),
    "entry_double_bracket": answer(["MEMORY.md:1-2|note=[x]]"]),
    "entry_no_note": answer(["MEMORY.md:1-2"]),
    "entry_note_unclosed": answer(["MEMORY.md:1-2|note=[x"]),
    "entry_note_tail": answer(["MEMORY.md:1-2|note=[x] tail"]),
    "entry_single_line_number": answer(["MEMORY.md:5|note=[x]"]),
    "entry_bad_numbers": answer(
        [
            "MEMORY.md:1.5-2|note=[x]",
            "MEMORY.md:0x1-2|note=[x]",
            "MEMORY.md:1_0-20|note=[x]",
            "MEMORY.md:\u0661-\u0662|note=[x]",
            "MEMORY.md:1-4294967296|note=[x]",
        ]
    ),
    "entry_plus_and_zeros": answer(["MEMORY.md:+1-+2|note=[x]", "MEMORY.md:007-010|note=[x]"]),
    "entry_reversed_and_zero": answer(["MEMORY.md:9-2|note=[x]", "MEMORY.md:0-0|note=[x]"]),
    "entry_empty_path": answer([":1-2|note=[x]"]),
    "entry_escaping_paths": answer(["../secrets.md:1-2|note=[x]", "/etc/passwd:1-1|note=[x]"]),
    "entry_last_note_wins": answer(["a:1-2|note=[x]:3-4|note=[y]"]),
    "entry_u32_max": answer(["MEMORY.md:4294967295-4294967295|note=[max]"]),
    "entries_duplicate_kept": answer(["MEMORY.md:1-2|note=[x]", "MEMORY.md:1-2|note=[x]"]),
    "entries_odd_whitespace": answer(
        ["\u3000MEMORY.md:1-2|note=[ideographic]\u3000", "MEMORY.md:3-4|note=[x]\x1c", "\ufeffMEMORY.md:5-6|note=[bom]"]
    ),
    "entries_bare_cr_does_not_split": answer(["a.md:1-1|note=[1]\rb.md:2-2|note=[2]"]),
    # docs/citation-format.md §2, stage A
    "stage_a_inline_block": f"hello{O}<rollout_ids>\n{A}\n</rollout_ids>{C} world",
    "stage_a_newline_kept": f"answer\n{O}<rollout_ids>\n{A}\n</rollout_ids>{C}",
    "stage_a_unterminated": f"answer\n{O}\n<citation_entries>\nMEMORY.md:1-2|note=[x]\n</citation_entries>\n<rollout_ids>\n{A}\n",
    "stage_a_nested": f"a{O}x{O}<rollout_ids>\n{A}\n</rollout_ids>{C}z{C}b",
    "stage_a_partial_open_tag": "hello <oai-mem-",
    "stage_a_stray_close": f"stray {C} close",
    "stage_a_case_sensitive": f"{O.upper()}\n<rollout_ids>\n{A}\n</rollout_ids>\n{C.upper()}",
    "stage_a_code_fence": f"Example:\n\n```\n{block(['MEMORY.md:1-2|note=[in fence]'])}\n```\n",
    "stage_a_legacy_wrapper": f"answer\n<memory_citation>\n<rollout_ids>\n{A}\n</rollout_ids>\n</memory_citation>",
    "stage_a_two_blocks": f"one{block(['a.md:1-1|note=[1]'], [A])}two{block(['b.md:2-2|note=[2]'], [B, A])}",
    "stage_a_block_not_at_end": block(["MEMORY.md:1-2|note=[x]"]) + "\n\nAnd more text after.",
    # docs/citation-format.md §3, stage B
    "stage_b_legacy_thread_ids": f"ok\n{O}\n<thread_ids>\n{A}\nnot-a-uuid\n{B}\n</thread_ids>\n{C}",
    "stage_b_rollout_over_thread_ids": f"ok\n{O}\n<rollout_ids>\n{A}\n</rollout_ids>\n<thread_ids>\n{B}\n</thread_ids>\n{C}",
    "stage_b_second_entries_ignored": f"{O}<citation_entries>\na:1-1|note=[1]\n</citation_entries>\n<citation_entries>\nb:2-2|note=[2]\n</citation_entries>{C}",
    "stage_b_entries_unclosed": f"{O}<citation_entries>\na:1-1|note=[1]\n<rollout_ids>\n{A}\n</rollout_ids>{C}",
    "stage_b_sections_reversed": f"{O}<rollout_ids>\n{A}\n</rollout_ids>\n<citation_entries>\na:1-1|note=[1]\n</citation_entries>{C}",
    "stage_b_empty_block": f"nothing here{O}\n{C}",
    # docs/citation-format.md §5, ids
    "ids_spellings": answer(
        [],
        [A, A.upper(), B.replace("-", ""), "{" + B + "}", "urn:uuid:" + A, "URN:UUID:" + A, "not-a-uuid", A],
    ),
    "ids_nil_uuid": answer([], ["00000000-0000-0000-0000-000000000000"]),
}


def main() -> None:
    HERE.mkdir(exist_ok=True)
    for name, text in REPLIES.items():
        (HERE / f"{name}.txt").write_bytes(text.encode("utf-8"))
    print(f"wrote {len(REPLIES)} replies to {HERE}")


if __name__ == "__main__":
    main()
