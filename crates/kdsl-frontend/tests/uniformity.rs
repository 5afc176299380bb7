//! The uniformity analysis (`kdsl_ir::analysis::uniformity`): barriers need every work-item of
//! the work-group (E0518), sub-group operations every work-item of the sub-group (E0519).

/// The codes of the errors `source` gets, in order; empty when it compiles.
fn codes(source: &str) -> Vec<String> {
    match kdsl_frontend::compile_to_ir(source) {
        Ok(_) => Vec::new(),
        Err(diagnostics) => diagnostics
            .into_iter()
            .map(|d| d.code.to_string())
            .collect(),
    }
}

/// The rendered diagnostics, which must be divergence errors.
fn rendered(source: &str) -> String {
    let diagnostics = kdsl_frontend::compile_to_ir(source).expect_err("must be rejected");
    assert!(
        diagnostics
            .iter()
            .all(|d| d.code == "E0518" || d.code == "E0519"),
        "{diagnostics:#?}"
    );
    kdsl_frontend::render_diagnostics("test.krn", source, &diagnostics, false)
}

#[track_caller]
fn accepted(source: &str) {
    if let Err(diagnostics) = kdsl_frontend::compile_to_ir(source) {
        panic!(
            "{}",
            kdsl_frontend::render_diagnostics("test.krn", source, &diagnostics, false)
        );
    }
}

#[track_caller]
fn rejected(source: &str, code: &str) {
    assert_eq!(codes(source), vec![code.to_string()], "{source}");
}

#[test]
fn barrier_after_a_divergent_early_return() {
    let source = "
kernel k(output: global mut [f32], n: u32) {
    local tile: [f32; 64];
    let gid = get_global_id(0);
    if gid >= n { return; }
    tile[get_local_id(0)] = 1.0;
    barrier();
    output[gid] = tile[0];
}";
    rejected(source, "E0518");
    let text = rendered(source);
    assert!(text.contains("some work-items return here"), "{text}");
    assert!(text.contains("`get_global_id`"), "{text}");
}

#[test]
fn barrier_after_a_uniform_early_return() {
    accepted(
        "
kernel k(output: global mut [f32], n: u32) {
    if n == 0 { return; }
    barrier();
    output[get_global_id(0)] = 1.0;
}",
    );
}

#[test]
fn barrier_under_a_group_id_condition() {
    accepted(
        "
kernel k(output: global mut [u32], n: u32) {
    local tile: [u32; 64];
    if get_group_id(0) == 0 && n > get_num_groups(0) * get_local_size(0) {
        tile[get_local_id(0)] = 1;
        barrier();
        output[get_global_id(0)] = tile[0];
    } else {
        barrier();
    }
}",
    );
}

#[test]
fn barrier_under_a_local_id_condition() {
    let source = "
kernel k(output: global mut [u32]) {
    if get_local_id(0) < 16 {
        barrier();
    }
}";
    rejected(source, "E0518");
    let text = rendered(source);
    assert!(
        text.contains("this condition depends on `get_local_id`"),
        "{text}"
    );
}

#[test]
fn barrier_in_a_loop_with_uniform_bounds() {
    accepted(
        "
kernel k(output: global mut [f32], input: global [f32], n: u32, steps: i32) {
    local tile: [f32; 64];
    let lid = get_local_id(0);
    let mut sum = 0.0;
    for i in 0..n {
        tile[lid] = input[i * 64 + lid];
        barrier();
        for j in 0..64u32 step 2 {
            sum += tile[j];
        }
        barrier();
    }
    let mut k = steps;
    while k > 0 {
        if k == 3 { k -= 2; continue; }
        barrier();
        k -= 1;
    }
    output[get_global_id(0)] = sum;
}",
    );
}

#[test]
fn barrier_in_a_loop_with_a_data_dependent_break() {
    let source = "
kernel k(output: global mut [f32], input: global [f32], n: u32) {
    for i in 0..n {
        barrier();
        if input[get_global_id(0) + i] < 0.0 { break; }
    }
}";
    rejected(source, "E0518");
    assert!(rendered(source).contains("some work-items leave the loop here"));
}

#[test]
fn barrier_in_a_loop_with_a_varying_bound() {
    let source = "
kernel k(output: global mut [f32], input: global [f32]) {
    for i in 0..get_local_id(0) {
        barrier();
    }
}";
    rejected(source, "E0518");
    assert!(rendered(source).contains("a different number of times"));
    // After the loop every work-item is back.
    accepted(
        "
kernel k(output: global mut [u32], input: global [f32]) {
    local counts: [u32; 256];
    for b in get_local_id(0)..256 step get_local_size(0) { counts[b] = 0; }
    barrier();
    output[get_global_id(0)] = counts[0];
}",
    );
}

#[test]
fn barrier_after_a_continue_in_the_same_iteration() {
    rejected(
        "
kernel k(output: global mut [f32], n: u32) {
    for i in 0..n {
        if get_local_id(0) == i { continue; }
        barrier();
    }
}",
        "E0518",
    );
    // Before the `continue` every work-item is there, in every iteration.
    accepted(
        "
kernel k(output: global mut [f32], n: u32) {
    for i in 0..n {
        barrier();
        if get_local_id(0) == i { continue; }
        output[i] = 1.0;
    }
}",
    );
}

#[test]
fn variable_assigned_under_a_varying_condition() {
    let source = "
kernel k(output: global mut [f32], n: u32) {
    let mut limit = n;
    if get_global_id(0) == 0 { limit = 4; }
    if limit > 2 {
        barrier();
    }
}";
    rejected(source, "E0518");
    assert!(rendered(source).contains("`limit`, which is assigned under a condition"));
    // Assigned again uniformly before the use: uniform there.
    accepted(
        "
kernel k(output: global mut [f32], n: u32) {
    let mut limit = get_global_id(0);
    limit = n;
    if limit > 2 { barrier(); }
}",
    );
}

#[test]
fn variable_made_varying_in_a_later_iteration() {
    rejected(
        "
kernel k(output: global mut [f32], n: u32) {
    let mut a = 0u32;
    let mut b = 0u32;
    for i in 0..n {
        if b > 0 { barrier(); }
        b = a;
        a = get_local_id(0);
    }
}",
        "E0518",
    );
}

#[test]
fn sub_group_reduction_under_conditions() {
    let source = "
kernel k(output: global mut [f32], input: global [f32]) {
    let i = get_global_id(0);
    if sub_group_local_id() == 0 {
        output[i] = sub_group_reduce_add(input[i]);
    }
}";
    rejected(source, "E0519");
    assert!(rendered(source).contains("this condition depends on `sub_group_local_id`"));
    accepted(
        "
kernel k(output: global mut [f32], input: global [f32]) {
    let i = get_global_id(0);
    if get_group_id(0) > 2 {
        output[i] = sub_group_reduce_add(input[i]);
    }
}",
    );
}

#[test]
fn sub_group_uniform_conditions() {
    // A reduction's result is the same in the sub-group: sub-group operations may depend on
    // it, barriers may not.
    accepted(
        "
kernel k(output: global mut [f32], input: global [f32]) {
    let i = get_global_id(0);
    let total = sub_group_reduce_add(input[i]);
    if total > 0.0 {
        output[i] = sub_group_shuffle_xor(input[i], 1u32);
    }
}",
    );
    let source = "
kernel k(output: global mut [f32], input: global [f32]) {
    let i = get_global_id(0);
    if sub_group_reduce_max(input[i]) > 0.0 {
        barrier();
    }
}";
    rejected(source, "E0518");
    assert!(rendered(source).contains("the same only within a sub-group"));
}

#[test]
fn sub_group_size_and_lane_counts_differ_between_sub_groups() {
    // 20 work-items with 16 lanes make sub-groups of 16 and 4: the size, a sum and a ballot
    // of a uniform value differ between them.
    for condition in [
        "sub_group_size() == 16",
        "sub_group_reduce_add(n) > 16",
        "sub_group_ballot(n > 0) == 65535",
    ] {
        let source = format!(
            "
kernel k(output: global mut [u32], n: u32) {{
    if {condition} {{ barrier(); }}
    output[get_global_id(0)] = 1;
}}"
        );
        rejected(&source, "E0518");
        assert!(
            rendered(&source).contains("the same only within a sub-group"),
            "{condition}"
        );
    }
    // Sub-group operations may still depend on them; `min`, `max`, `any` and `all` of a
    // uniform value are that value in every sub-group.
    accepted(
        "
kernel k(output: global mut [u32], n: u32) {
    let i = get_global_id(0);
    if sub_group_size() == 16 { output[i] = sub_group_reduce_add(i); }
    if sub_group_reduce_max(n) > 2 && sub_group_all(n > 1) { barrier(); }
    if sub_group_any(n > 3) && sub_group_reduce_min(n) > 0 { barrier(); }
    if get_num_sub_groups() > 1 { barrier(); }
}",
    );
}

#[test]
fn sub_group_operation_on_the_right_of_a_short_circuit() {
    rejected(
        "
kernel k(output: global mut [u32], input: global [u32]) {
    let i = get_global_id(0);
    if i < 8 && sub_group_reduce_add(input[i]) > 0 {
        output[i] = 1;
    }
}",
        "E0519",
    );
}

#[test]
fn device_function_with_a_barrier() {
    let helper = "
fn sync(x: u32) -> u32 {
    barrier();
    return x + 1;
}
";
    let source = format!(
        "{helper}
kernel k(output: global mut [u32]) {{
    let i = get_global_id(0);
    if i % 2 == 0 {{
        output[i] = sync(i);
    }}
}}"
    );
    rejected(&source, "E0518");
    assert!(rendered(&source).contains("`sync` calls `barrier()`"));
    accepted(&format!(
        "{helper}
kernel k(output: global mut [u32], n: u32) {{
    let i = get_global_id(0);
    if n > 2 {{
        output[i] = sync(i);
    }}
}}"
    ));
    // Transitively, through a function without a barrier of its own.
    rejected(
        &format!(
            "{helper}
fn outer(x: u32) -> u32 {{
    return sync(x) * 2;
}}
kernel k(output: global mut [u32]) {{
    let i = get_global_id(0);
    if i > 3 {{
        output[i] = outer(i);
    }}
}}"
        ),
        "E0518",
    );
}

#[test]
fn device_function_analysed_with_its_arguments() {
    let helper = "
fn maybe_sync(flag: u32) {
    if flag > 0 {
        barrier();
    }
}
";
    // With a uniform argument the condition inside is uniform.
    accepted(&format!(
        "{helper}
kernel k(output: global mut [u32], n: u32) {{
    maybe_sync(n);
}}"
    ));
    let source = format!(
        "{helper}
kernel k(output: global mut [u32], n: u32) {{
    maybe_sync(n);
    maybe_sync(get_local_id(0));
}}"
    );
    rejected(&source, "E0518");
    assert!(rendered(&source).contains("the parameter `flag`"));
    // A result computed from a varying argument varies.
    rejected(
        "
fn twice(x: u32) -> u32 { return x * 2; }
kernel k(output: global mut [u32], n: u32) {
    if twice(get_local_id(0)) > n { barrier(); }
}",
        "E0518",
    );
    accepted(
        "
fn twice(x: u32) -> u32 { return x * 2; }
kernel k(output: global mut [u32], n: u32) {
    if twice(n) > 4 { barrier(); }
}",
    );
}

#[test]
fn barrier_after_a_divergent_return_inside_a_loop() {
    rejected(
        "
kernel k(output: global mut [u32], n: u32) {
    for i in 0..n {
        if get_local_id(0) == i { return; }
    }
    barrier();
}",
        "E0518",
    );
}

#[test]
fn deeply_nested_loops_stay_fast() {
    let mut source =
        String::from("kernel k(output: global mut [u32], n: u32) {\n let mut x = 0u32;\n");
    for depth in 0..40 {
        source.push_str(&format!("for i{depth} in 0..n {{\n x = x + 1;\n"));
    }
    source.push_str("if x > 3 { barrier(); }\n");
    for _ in 0..40 {
        source.push_str("}\n");
    }
    source.push_str("}\n");
    accepted(&source);
}

#[test]
fn shuffles_of_uniform_values_and_broadcasts() {
    // A shuffle of a uniform value is that value; a shuffle from one lane is the same in the
    // whole sub-group, so a loop may depend on it and keep its sub-group operations.
    accepted(
        "
kernel k(output: global mut [u32], input: global [u32], n: u32) {
    let i = get_global_id(0);
    if sub_group_shuffle(n, i % sub_group_size()) > 2 { barrier(); }
    for j in 0..sub_group_shuffle(input[i], 0u32) {
        output[i] = sub_group_reduce_add(j);
    }
}",
    );
    rejected(
        "
kernel k(output: global mut [u32], input: global [u32]) {
    let i = get_global_id(0);
    if sub_group_shuffle(input[i], 0u32) > 2 { barrier(); }
}",
        "E0518",
    );
    let source = "
kernel k(output: global mut [u32], input: global [u32]) {
    let i = get_global_id(0);
    for j in 0..sub_group_shuffle_xor(input[i], 1u32) {
        output[i] = sub_group_reduce_add(j);
    }
}";
    // The bound is computed again at every iteration, when some lanes have left.
    assert_eq!(codes(source), vec!["E0519", "E0519"]);
}

#[test]
fn read_only_buffers_at_uniform_indices() {
    // Nothing writes a read-only buffer during a launch: its elements at a uniform index are
    // uniform.
    accepted(
        "
kernel k(output: global mut [f32], sizes: global [u32], weights: constant [f32]) {
    let n = sizes[get_group_id(0)];
    for i in 0..n {
        if weights[i] > 0.5 { barrier(); }
    }
}",
    );
    rejected(
        "
kernel k(output: global mut [f32], sizes: global [u32]) {
    if sizes[get_local_id(0)] > 2 { barrier(); }
}",
        "E0518",
    );
    // A writable buffer may change under the loads.
    let source = "
kernel k(output: global mut [u32]) {
    if output[0] > 2 { barrier(); }
}";
    rejected(source, "E0518");
    assert!(rendered(source).contains("a value read from `output`"));
}

#[test]
fn a_writable_buffer_passed_as_read_only_still_changes() {
    // The callee declares `counter` read-only, but the kernel's buffer is writable and was just
    // updated by an atomic: what the callee reads differs between work-items.
    let source = "
fn wait_for(counter: global [u32]) {
    if counter[0] > 3 { barrier(); }
}
kernel k(counter: global mut [u32], output: global mut [u32]) {
    atomic_add(counter[0], 1u32);
    wait_for(counter);
    output[get_global_id(0)] = 1;
}";
    rejected(source, "E0518");
    let text = rendered(source);
    assert!(text.contains("a value read from `counter`"), "{text}");
    // Passed on through a second read-only parameter, it still changes.
    rejected(
        "
fn decide(values: global [u32]) -> bool { return values[0] > 3; }
fn wait_for(counter: global [u32]) {
    if decide(counter) { barrier(); }
}
kernel k(counter: global mut [u32]) {
    atomic_add(counter[0], 1u32);
    wait_for(counter);
}",
        "E0518",
    );
    // A kernel's read-only buffer passed on stays unchanged, hence uniform.
    accepted(
        "
fn wait_for(sizes: global [u32]) {
    if sizes[0] > 3 { barrier(); }
}
kernel k(sizes: global [u32], output: global mut [u32]) {
    wait_for(sizes);
    output[get_global_id(0)] = 1;
}",
    );
}

#[test]
fn private_arrays_hold_what_was_stored() {
    accepted(
        "
kernel k(output: global mut [u32], n: u32) {
    let mut bounds: [u32; 4];
    for j in 0..4u32 { bounds[j] = n + j; }
    for i in 0..bounds[2] { barrier(); }
}",
    );
    rejected(
        "
kernel k(output: global mut [u32], n: u32) {
    let mut bounds: [u32; 4];
    bounds[get_local_id(0) % 4] = n;
    if bounds[0] > 1 { barrier(); }
}",
        "E0518",
    );
    // Local arrays are shared and written by every work-item.
    rejected(
        "
kernel k(output: global mut [u32], n: u32) {
    local shared: [u32; 4];
    shared[0] = n;
    barrier();
    if shared[0] > 1 { barrier(); }
}",
        "E0518",
    );
}

const TUPLE_AND_ARRAY_FUNCTIONS: &str = "
    fn halve(n: u32) -> (u32, u32) {
        return (n / 2, n % 2);
    }
    fn fill(row: private mut [u32; 2], value: u32) {
        row[0] = value;
        row[1] = value + 1;
    }
";

#[test]
fn tuple_results_and_written_arrays_are_as_uniform_as_what_the_callee_stores() {
    accepted(&format!(
        "{TUPLE_AND_ARRAY_FUNCTIONS}
        kernel k(output: global mut [f32], input: global [f32], n: u32) {{
            let (half, _) = halve(n);
            let mut row: [u32; 2];
            fill(row, get_group_id(0));
            if half > 3 && row[1] > 0 {{
                barrier();
            }}
            output[get_global_id(0)] = sub_group_broadcast(input[get_global_id(0)], half % 4);
        }}"
    ));
}

#[test]
fn tuple_results_and_written_arrays_of_varying_values_are_varying() {
    rejected(
        &format!(
            "{TUPLE_AND_ARRAY_FUNCTIONS}
            kernel k(output: global mut [f32]) {{
                let (half, _) = halve(get_local_id(0));
                if half > 3 {{
                    barrier();
                }}
                output[0] = 1.0;
            }}"
        ),
        "E0518",
    );
    rejected(
        &format!(
            "{TUPLE_AND_ARRAY_FUNCTIONS}
            kernel k(output: global mut [f32]) {{
                let mut row: [u32; 2];
                fill(row, get_local_id(0));
                if row[0] > 3 {{
                    barrier();
                }}
                output[0] = 1.0;
            }}"
        ),
        "E0518",
    );
}

#[test]
fn a_read_only_private_array_argument_is_as_uniform_as_its_contents() {
    let functions = "
        fn first(row: private [u32; 2]) -> u32 {
            return row[0];
        }
    ";
    accepted(&format!(
        "{functions}
        kernel k(output: global mut [f32], n: u32) {{
            let mut row: [u32; 2];
            row[0] = n;
            if first(row) > 3 {{
                barrier();
            }}
            output[0] = 1.0;
        }}"
    ));
    rejected(
        &format!(
            "{functions}
            kernel k(output: global mut [f32]) {{
                let mut row: [u32; 2];
                row[0] = get_local_id(0);
                if first(row) > 3 {{
                    barrier();
                }}
                output[0] = 1.0;
            }}"
        ),
        "E0518",
    );
}
