"""myops.diagonal against torch.diagonal(...).contiguous() (the copy a user would write).

Cases: batched matrices [B, n, n] over dims (-2, -1); the diagonal over the leading dims of
[n, n, C] (output [C, n], a transpose-like gather); a transposed input; the backward
(gradient scattered onto a zero tensor) against aten.diagonal_backward; and a tiny latency case.
"""

import torch
from runner import Case

import myops


def _bytes_fwd(out):
    return 2 * out.numel() * out.element_size()  # each diagonal element read once, written once


def cases(device, quick):
    cs = []
    if device == "cpu":
        big = [(256, 64, torch.float32), (4096, 64, torch.float32), (64, 512, torch.float32), (1024, 32, torch.float64)]
        nnc = [(512, 64, torch.float32), (1024, 16, torch.float32)]
        tr = [(2048, torch.float32)]
        if quick:
            big, nnc, tr = big[:3], nnc[:1], tr
    else:
        big = [
            (4096, 64, torch.float32),
            (1024, 512, torch.float32),
            (16384, 32, torch.float16),
            (256, 2048, torch.float64),
        ]
        nnc = [(2048, 256, torch.float32), (4096, 64, torch.bfloat16)]
        tr = [(8192, torch.float32)]
        if quick:
            big, nnc, tr = big[:2], nnc[:1], tr

    heads = {big[0], nnc[0]}  # headline: the first case of each form, the backward and the latency case
    for b, n, dtype in big:
        x = torch.randn(b, n, n, device=device).to(dtype)
        out = myops.diagonal(x, 0, -2, -1)
        cs.append(
            Case(
                label="diagonal",
                sub_label=f"[{b},{n},{n}] (-2,-1) {str(dtype)[6:]}",
                myops=lambda x=x: myops.diagonal(x, 0, -2, -1),
                torch={"torch": lambda x=x: torch.diagonal(x, 0, -2, -1).contiguous()},
                bytes=_bytes_fwd(out),
                numel=out.numel(),
                target=1.0,
                headline=(b, n, dtype) in heads,
            )
        )
    for n, c, dtype in nnc:
        x = torch.randn(n, n, c, device=device).to(dtype)
        out = myops.diagonal(x)
        cs.append(
            Case(
                label="diagonal",
                sub_label=f"[{n},{n},{c}] (0,1) {str(dtype)[6:]}",
                myops=lambda x=x: myops.diagonal(x),
                torch={"torch": lambda x=x: torch.diagonal(x).contiguous()},
                bytes=_bytes_fwd(out),
                numel=out.numel(),
                target=1.0,
                headline=(n, c, dtype) in heads,
            )
        )
    for n, dtype in tr:
        x = torch.randn(n, n, device=device).to(dtype).t()
        x3 = torch.randn(64, 96, 128, device=device).to(dtype).permute(2, 0, 1)  # [128, 64, 96]
        for xx, dims, name in [
            (x, (0, 1), f"[{n},{n}].t() offset 1"),
            (x3, (1, 2), "[64,96,128].permute(2,0,1) (1,2)"),
        ]:
            out = myops.diagonal(xx, 1 if xx is x else 0, *dims)
            off = 1 if xx is x else 0
            cs.append(
                Case(
                    label="diagonal",
                    sub_label=f"{name} {str(dtype)[6:]}",
                    myops=lambda xx=xx, off=off, dims=dims: myops.diagonal(xx, off, *dims),
                    torch={"torch": lambda xx=xx, off=off, dims=dims: torch.diagonal(xx, off, *dims).contiguous()},
                    bytes=_bytes_fwd(out),
                    numel=out.numel(),
                    target=1.0,
                )
            )
    # backward: zero tensor of the input's shape with the gradient on its diagonal
    b, n = (256, 64) if device == "cpu" else (4096, 64)
    g = torch.randn(b, n, device=device)
    sizes = [b, n, n]
    cs.append(
        Case(
            label="diagonal_backward",
            sub_label=f"[{b},{n},{n}] (-2,-1) float32",
            myops=lambda: myops.diagonal_backward(g, sizes, 0, -2, -1),
            torch={"torch": lambda: torch.ops.aten.diagonal_backward(g, sizes, 0, -2, -1)},
            bytes=b * n * n * 4 + 2 * g.numel() * 4,
            numel=b * n * n,
            target=1.0,
            headline=True,
        )
    )
    # latency, and the same small calls under inference_mode: that skips the Python autograd
    # kernel torch.library.register_autograd puts in front of every myops call (~2-3 us on CPU)
    x = torch.randn(8, 8, device=device)
    xb = torch.randn(256, 64, 64, device=device)
    cs.append(
        Case(
            label="diagonal",
            sub_label="[8,8] latency float32",
            myops=lambda: myops.diagonal(x),
            torch={"torch": lambda: torch.diagonal(x).contiguous()},
            bytes=2 * 8 * 4,
            numel=8,
            target=1.0,
            headline=True,
        )
    )
    for xx, name in [(x, "[8,8] latency"), (xb, "[256,64,64] (-2,-1)")]:

        def my(xx=xx):
            with torch.inference_mode():
                return myops.diagonal(xx, 0, -2, -1)

        def ref(xx=xx):
            with torch.inference_mode():
                return torch.diagonal(xx, 0, -2, -1).contiguous()

        n = min(xx.shape[-2:])
        cs.append(
            Case(
                label="diagonal",
                sub_label=f"{name} float32 inference_mode",
                myops=my,
                torch={"torch": ref},
                bytes=2 * xx[..., 0, 0].numel() * n * 4,
                numel=xx[..., 0, 0].numel() * n,
                target=1.0,
                # torch 2.14's Inductor fails on inference_mode entered inside the compiled function,
                # and the failure leaves the dispatcher's Python state broken for the whole process
                inductor=False,
            )
        )
    return cs
