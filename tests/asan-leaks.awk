# asan-leaks.awk — the leaks in a `make test-asan` log that are not
# Criterion's own; it exits 1 when there is one, and prints each one's first
# line and first frame outside Criterion.
#
# Why not an LSan suppression: a suppression matches a frame anywhere in the
# allocation's stack, and every test's allocations run under Criterion's
# frames, so `leak:libcriterion.so` (tests/lsan.supp until 2026-12-06) hid
# every leak a test made, vlsim's own among them (cores_free never freed
# turn_at; run_result_free needed a scenario some tests had freed). Here a
# leak is Criterion's only when every frame above the allocator (#0) is in
# libcriterion: its runner leaks a few blocks at exit (Criterion issue #113).
/^(Direct|Indirect) leak of/ { head = $0; inleak = 1; own = ""; next }
inleak && /^ +#[0-9]+ / {
    if ($1 != "#0" && $0 !~ /libcriterion/ && own == "")
        own = $0
    next
}
inleak {                       # the blank line that ends a leak's stack
    if (own != "") { print head; print own; n++ }
    inleak = 0
}
END {
    if (inleak && own != "") { print head; print own; n++ }
    exit n > 0
}
