"""Where student code runs in the class grader: the kernel's confinement and the executor inside it.

`confine.Sandbox` puts a notebook's first process into its own namespaces, Landlock domain, uid and
cgroup (`landlock`, `cgroup` and `syscall` are the kernel interfaces it uses); `executor` runs the
student's cells there. Everything in a sandbox is presumed hostile: nothing it holds decides a verdict.
"""
