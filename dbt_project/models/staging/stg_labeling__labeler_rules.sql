-- Each labeler's rule in words and its parameters (JSON), as labeling/label_catalog wrote them.
select
    cast(labeler as varchar) as labeler,
    cast(rule as varchar) as rule,
    cast(parameters as varchar) as parameters
from {{ source('labeling', 'labeler_rules') }}
