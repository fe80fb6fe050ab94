// Every test's waitFor/findBy waits up to 5 s, not testing-library's 1 s: on
// CI's busy 2-core machine a render after a fetch has taken just over a
// second (a node-config page test failed at 1,033 ms). A failing wait still
// fails, only later.
import { configure } from "@testing-library/react";

configure({ asyncUtilTimeout: 5_000 });
