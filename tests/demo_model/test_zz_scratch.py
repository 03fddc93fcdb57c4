import os
import pytest
from tests.demo_model.conftest import Seeded
from tests.demo_model.test_cited_answers import uncited, check_cited_answer, stranger  # noqa

QS = os.environ.get("QS", "").split("|")


@pytest.mark.parametrize("q", QS)
def test_show(year: Seeded, stranger: int, q: str) -> None:
    demo = year.demo()
    turn = demo.ask(q)
    print("\n=== ", q)
    print([(n, a) for n, a, _ in turn.calls])
    print(turn.text)
    print("UNCITED:", dict(uncited(demo)))
    try:
        check_cited_answer(year, demo, stranger)
    except AssertionError as e:
        print("CITE FAIL:", str(e)[:500])
