"""What crosses between processes, shared by the judging and the measuring side, and running nothing.

Plain numbers (`arrays`), their framing (`protocol`), the inputs a check draws and how messages name
them (`samples`), tensor comparison (`tensors`) and the verdict (`verdict`). Nothing here can carry or
run code: a message decoded by these modules is data, whoever wrote it.
"""
